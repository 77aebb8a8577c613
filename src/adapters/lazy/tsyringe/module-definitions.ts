import { InstrumentationNodeModuleDefinition, InstrumentationNodeModuleFile } from '@opentelemetry/instrumentation';
import type { TsyringeDependencyContainerModule, TsyringeObserver, TsyringePatcher } from './container-observer';

/** tsyringe majors the hooks are written and tested for. */
export const SUPPORTED_TSYRINGE_VERSIONS = ['>=4.0.0 <5'];

/**
 * The hook on tsyringe's container module. Its CommonJS build is what both `require('tsyringe')` and an ESM
 * `import 'tsyringe'` load (the package has no `exports` map; Node picks `main`), and the container is
 * required from inside the package, where the CommonJS hook sees it.
 */
export function tsyringeModuleDefinitions(
  observer: () => TsyringeObserver,
  patcher: TsyringePatcher,
): InstrumentationNodeModuleDefinition[] {
  return [
    new InstrumentationNodeModuleDefinition('tsyringe', SUPPORTED_TSYRINGE_VERSIONS, undefined, undefined, [
      new InstrumentationNodeModuleFile(
        'tsyringe/dist/cjs/dependency-container.js',
        SUPPORTED_TSYRINGE_VERSIONS,
        (exports: TsyringeDependencyContainerModule, version?: string) => observer().patch(exports, version, patcher),
        () => observer().unpatch(patcher),
      ),
    ]),
  ];
}
