import path from 'node:path';
import { importInTheMiddle, type ImportInTheMiddle } from '../../patching/import-in-the-middle';
import { isRecordingLoads, STEP_KIND, stepRecorded } from '../../shared/boot-clock';
import { safeLog } from '../../shared/logger';
import type { ClassOriginIndex } from './class-origin';

/**
 * Feeds the origin index with every package an ESM application imports, so that classes from ESM-only
 * libraries outside `@nestjs/*` count as library classes (their modules' beans are framework beans, and a
 * class extending one is an entry point). The ESM loader keeps no table like `require.cache`; what sees each
 * module is the OpenTelemetry loader hook an ESM app must register anyway, and a catch-all import-in-the-middle
 * hook receives every module it wrapped — including those imported before this call, which it replays — with
 * the package directory (`baseDir`) of those that come from one.
 *
 * The copy of import-in-the-middle is the one beside the application's `@opentelemetry/instrumentation`, as
 * the loader hook talks to that copy. A CommonJS app has no loader hook: the hook never fires, and
 * `require.cache` covers it (an ESM package it requires leaves its root there). Returns the undo, or undefined
 * when import-in-the-middle cannot be found (then ESM-only libraries stay `unknown`, as before).
 */
export function watchEsmLibraries(origins: ClassOriginIndex): (() => void) | undefined {
  let iitm: ImportInTheMiddle;
  try {
    iitm = importInTheMiddle();
  } catch (err) {
    safeLog('debug', `ESM library classes not indexed: import-in-the-middle not found (${(err as Error).message})`);
    return undefined;
  }
  try {
    // The modules import-in-the-middle replays while the hook is being registered were evaluated earlier.
    let replaying = true;
    const hook = new iitm.Hook((namespace, name, baseDir) => {
      // When each ES module finished evaluating (its imports first): the start-up timeline's ESM packages. The
      // ESM loader has no per-module call around a load as CommonJS has, so this is all a hook can see.
      if (!replaying && isRecordingLoads() && (baseDir !== undefined || path.isAbsolute(name))) {
        const now = performance.now();
        stepRecorded(STEP_KIND.esm, 'esm.evaluate', now, now, name, baseDir ?? '');
      }
      // Packages come with their directory; the application's own files by absolute path; builtins by name.
      // Returning nothing leaves the namespace untouched.
      if (baseDir !== undefined) origins.registerLibraryLater(namespace);
      else if (path.isAbsolute(name)) origins.registerAppLater(namespace, name);
      return undefined;
    });
    replaying = false;
    return () => hook.unhook?.();
  } catch (err) {
    safeLog('debug', `ESM library classes not indexed: ${(err as Error).message}`);
    return undefined;
  }
}
