import path from 'node:path';

/**
 * Where this package's compiled code lives (`dist/`, or `src/` when the sources run under ts-jest) and the
 * package's own folder above it, wherever the package is installed: one place that knows how deep this file
 * sits, so that moving a module never breaks a path built from `__dirname`.
 */
export const CODE_ROOT = path.resolve(__dirname, '..');
export const PACKAGE_ROOT = path.resolve(CODE_ROOT, '..');
