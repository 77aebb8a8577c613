/**
 * A tsyringe class resolved before ready without registration, then registered as a singleton before ready and never
 * resolved again (a trial's app: `Server` builds its router from `Builder`, then `App.start` calls
 * `registerSingleton(Builder)`): with Phase 2 on, it was resolved as a transient, whose instance is not tracked, and
 * must not read as a bean with no methods to call (a version that told the resolution at ready, under the
 * registration made since, tracked no instance and said `no-methods`).
 */
import 'reflect-metadata';
import { resolveConfig } from '../../../../src/config/properties';
import { GhostDetector, STARTUP_PUBLISH_DELAY_MS } from '../../../../src/ghost/detector';
import { unwrapMethod, wrapMethod } from '../../../../src/patching/wrap';
import { tempDir } from '../../../support/temp';

const patcher = { wrap: wrapMethod, unwrap: unwrapMethod };

it('with Phase 2, a class resolved as a transient and registered a singleton later is not said to have no methods', async () => {
  const { TsyringeObserver } =
    require('../../../../src/adapters/lazy/tsyringe/container-observer') as typeof import('../../../../src/adapters/lazy/tsyringe/container-observer');
  const tsyringe = require('tsyringe') as typeof import('tsyringe');
  const detector = new GhostDetector(
    resolveConfig({ report: { dir: tempDir('tsyringe-early') }, ghostTracking: { enabled: true } }),
  );
  const observer = new TsyringeObserver(detector);
  observer.patch(require('tsyringe/dist/cjs/dependency-container'), '4.10.0', patcher);
  try {
    class Builder {
      getRouter(): string {
        return 'router';
      }
    }
    tsyringe.injectable()(Builder);
    const container = tsyringe.container.createChildContainer();
    expect(container.resolve(Builder).getRouter()).toBe('router');
    container.registerSingleton(Builder);
    (
      require('../../../../src/adapters/lazy/ready') as typeof import('../../../../src/adapters/lazy/ready')
    ).diagReady();
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    const snapshot = detector.tracker!.snapshot();
    expect(snapshot.untrackable.Builder).not.toBe('no-methods');
  } finally {
    observer.unpatch(patcher);
    // the start-up timeline publishes a moment after ready: let it, so that no timer outlives the file
    await new Promise((resolve) => setTimeout(resolve, STARTUP_PUBLISH_DELAY_MS + 50));
  }
});
