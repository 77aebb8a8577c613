/** The test file's global through which temp.ts hands its directories to environment.ts. */
export const TEMP_DIRS_GLOBAL = '__diagTempDirs';

/** The test file's global through which children.ts hands its started processes to environment.ts. */
export const CHILDREN_GLOBAL = '__diagChildren';
