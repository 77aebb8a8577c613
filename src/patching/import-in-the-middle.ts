import { createRequire } from 'node:module';

/** What the ESM hooks see of a module: its namespace, its name (`pkg` or `pkg/inner/file.js`), its package directory. */
export type EsmHookFn = (namespace: unknown, name: string, baseDir: string | undefined) => unknown;

/** The part of import-in-the-middle's API used here (the same in its 1.x to 3.x releases). */
export interface ImportInTheMiddle {
  Hook: new (...args: [EsmHookFn] | [string[], { internals?: boolean }, EsmHookFn]) => { unhook?(): void };
}

/**
 * import-in-the-middle as the OpenTelemetry loader hook (`@opentelemetry/instrumentation/hook.mjs`) talks to it:
 * the copy beside the application's `@opentelemetry/instrumentation`, since hooks registered with another copy
 * would never be called. Throws when it cannot be found.
 */
export function importInTheMiddle(): ImportInTheMiddle {
  if (found === undefined) {
    const besideInstrumentation = createRequire(require.resolve('@opentelemetry/instrumentation'));
    found = besideInstrumentation('import-in-the-middle') as ImportInTheMiddle;
  }
  return found;
}

/** Resolved once per process: the module hooks and the ESM library index both ask. */
let found: ImportInTheMiddle | undefined;
