import { InstrumentationNodeModuleDefinition } from '@opentelemetry/instrumentation';
import type { InversifyObserver, InversifyPatcher } from './container-observer';

/** InversifyJS majors the hooks are written for: 6 through its Container, 7 and 8 through @inversifyjs/core. */
export const SUPPORTED_INVERSIFY_6 = ['>=6.0.0 <7'];
export const SUPPORTED_INVERSIFY_7 = ['>=7.0.0 <9'];
/**
 * The @inversifyjs/core releases InversifyJS 7 and 8 are built on: 4 (InversifyJS 7.0.0) through 9 (7.11) and 10
 * through 15 (8.x). All have `BindingService#set`, bindings that `resolveBindingActivations` reads `onActivation`
 * from at each activation, and `getClassMetadata`; tested on 4 (7.0.0), 7 (7.8.1), 9 (7.11.0) and 15 (8.2.3).
 */
export const SUPPORTED_INVERSIFY_CORE = ['>=4.0.0 <16'];
/** What InversifyJS 6.1 and 6.2 load: @inversifyjs/core 1, for its metadata only. */
export const INVERSIFY_6_CORE = ['>=1.0.0 <2'];

type Exports = Record<string, unknown>;

/**
 * The hooks patch classes' prototypes, never the modules' exports, so one definition serves the CommonJS build
 * and the ESM one (an import-in-the-middle namespace) alike.
 */
export function inversifyModuleDefinitions(
  observer: () => InversifyObserver,
  patcher: InversifyPatcher,
): InstrumentationNodeModuleDefinition[] {
  let inversify7Version: string | undefined;
  return [
    new InstrumentationNodeModuleDefinition(
      'inversify',
      SUPPORTED_INVERSIFY_6,
      (exports: Exports, version?: string) => {
        observer().patchContainer6(exports, version, patcher);
        return exports;
      },
      () => observer().unpatch(patcher),
    ),
    // InversifyJS 7 and 8 only re-export: their version is what the reports name
    new InstrumentationNodeModuleDefinition(
      'inversify',
      SUPPORTED_INVERSIFY_7,
      (exports: Exports, version?: string) => {
        inversify7Version = version;
        return exports;
      },
    ),
    new InstrumentationNodeModuleDefinition(
      '@inversifyjs/core',
      SUPPORTED_INVERSIFY_CORE,
      (exports: Exports) => {
        observer().patchCore7(exports, patcher, () => inversify7Version);
        return exports;
      },
      () => observer().unpatch(patcher),
    ),
    // Nothing to patch (InversifyJS 6 is observed through its Container): named so that loading it is expected,
    // not an unsupported @inversifyjs/core to warn about
    new InstrumentationNodeModuleDefinition('@inversifyjs/core', INVERSIFY_6_CORE),
  ];
}
