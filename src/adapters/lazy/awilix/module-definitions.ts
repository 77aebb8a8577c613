import { InstrumentationNodeModuleDefinition, InstrumentationNodeModuleFile } from '@opentelemetry/instrumentation';
import type { AwilixObserver, AwilixPatcher } from './container-observer';

/** awilix majors the hooks are written and tested for. */
export const SUPPORTED_AWILIX_VERSIONS = ['>=10.0.0 <14'];

type Exports = Record<string, unknown>;

/**
 * CommonJS: the package's entry re-exports through getters that cannot be replaced, so the hooks are on the
 * files that define `createContainer` and the resolver factories, read through those getters at each call.
 * ESM: `import 'awilix'` loads one bundle (`lib/awilix.module.mjs`), patched through its namespace.
 */
export function awilixModuleDefinitions(
  observer: () => AwilixObserver,
  patcher: AwilixPatcher,
): InstrumentationNodeModuleDefinition[] {
  return [
    new InstrumentationNodeModuleDefinition(
      'awilix',
      SUPPORTED_AWILIX_VERSIONS,
      (exports: Exports, version?: string) => {
        // the CommonJS entry's getters say false to a write: its files are patched instead
        if (isEsmNamespace(exports)) {
          observer().patchResolvers(exports, version, patcher);
          observer().patchContainer(exports, version, patcher);
        }
        return exports;
      },
      (exports: Exports) => {
        if (exports !== undefined && isEsmNamespace(exports)) observer().unpatch(patcher);
      },
      [
        new InstrumentationNodeModuleFile(
          'awilix/lib/resolvers.js',
          SUPPORTED_AWILIX_VERSIONS,
          (exports: Exports, version?: string) => {
            observer().patchResolvers(exports, version, patcher);
            return exports;
          },
          () => observer().unpatch(patcher),
        ),
        new InstrumentationNodeModuleFile(
          'awilix/lib/container.js',
          SUPPORTED_AWILIX_VERSIONS,
          (exports: Exports, version?: string) => {
            observer().patchContainer(exports, version, patcher);
            return exports;
          },
          () => observer().unpatch(patcher),
        ),
      ],
    ),
  ];
}

/** An ESM namespace (as import-in-the-middle hands it) rather than the CommonJS entry's exports object. */
function isEsmNamespace(exports: Exports): boolean {
  const d = Object.getOwnPropertyDescriptor(exports, 'createContainer');
  // the CommonJS entry defines each export as a getter without a setter
  return !(d !== undefined && typeof d.get === 'function' && d.set === undefined && exports.__esModule === true);
}
