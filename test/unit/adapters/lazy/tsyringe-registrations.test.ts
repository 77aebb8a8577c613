/**
 * Several registrations of one tsyringe token (a list of endpoints or plugins, `register('Endpoint', …)` once per
 * file, handed out by `resolveAll` or `@injectAll`): an outside trial's application saw its endpoints as one
 * binding, the last registered, so the others were missing from the graph and no instance `resolveAll` returned
 * was tracked (an array has no methods). Each class registered under a token is a binding of its own; the same
 * class registered again, or a value registered again (a child container per request), is the same binding.
 * Real tsyringe, patched in this process (jest's module registry hides the module hook).
 */
import 'reflect-metadata';
import { resolveConfig } from '../../../../src/config/properties';
import { GhostDetector, STARTUP_PUBLISH_DELAY_MS } from '../../../../src/ghost/detector';
import { unwrapMethod, wrapMethod } from '../../../../src/patching/wrap';
import { tempDir } from '../../../support/temp';

type Tsyringe = typeof import('tsyringe');
const patcher = { wrap: wrapMethod, unwrap: unwrapMethod };

interface Endpoint {
  handle(): string;
}

/** Turns enough for the analysis after ready (its scan, the bindings' origins, the rest). */
async function readyAndAnalysed(): Promise<void> {
  (require('../../../../src/adapters/lazy/ready') as typeof import('../../../../src/adapters/lazy/ready')).diagReady();
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
}

function nodesOf(detector: GhostDetector): Record<string, { className?: string; resolved?: boolean }> {
  return Object.fromEntries(detector.diagReport()!.graph.nodes.map((n) => [n.name, n]));
}

afterAll(async () => {
  // the start-up timeline publishes a moment after ready: let it, so that no timer outlives the file
  await new Promise((resolve) => setTimeout(resolve, STARTUP_PUBLISH_DELAY_MS + 50));
});

describe.each([false, true])('tsyringe, one token registered several times (Phase 2 %s)', (phase2) => {
  it('makes a binding of each class, tells each what resolveAll and resolve handed out, and keeps repeats as one', async () => {
    jest.resetModules();
    const { TsyringeObserver } =
      require('../../../../src/adapters/lazy/tsyringe/container-observer') as typeof import('../../../../src/adapters/lazy/tsyringe/container-observer');
    const tsyringe = require('tsyringe') as Tsyringe;
    const detector = new GhostDetector(
      resolveConfig({ report: { dir: tempDir('tsyringe-registrations') }, ghostTracking: { enabled: phase2 } }),
    );
    const observer = new TsyringeObserver(detector);
    observer.patch(require('tsyringe/dist/cjs/dependency-container'), '4.10.0', patcher);
    try {
      class UsersEndpoint implements Endpoint {
        handle(): string {
          return 'users';
        }
      }
      class OrdersEndpoint implements Endpoint {
        handle(): string {
          return 'orders';
        }
      }
      class DefaultClock {
        now(): number {
          return 1;
        }
      }
      class FixedClock {
        now(): number {
          return 2;
        }
      }
      const container = tsyringe.container.createChildContainer();
      const singleton = { lifecycle: tsyringe.Lifecycle.Singleton };
      container.register('Endpoint', { useClass: UsersEndpoint }, singleton);
      container.register('Endpoint', { useClass: OrdersEndpoint }, singleton);
      // the same class again (`@singleton()` and `registerSingleton` of one class): the same binding
      container.register('Endpoint', { useClass: OrdersEndpoint }, singleton);
      // a default replaced: `resolve` hands out the last registration only
      container.register('Clock', { useClass: DefaultClock }, singleton);
      container.register('Clock', { useClass: FixedClock }, singleton);
      // a value registered again and again (a child container per request): one binding
      for (let i = 0; i < 3; i++) container.createChildContainer().register('Request', { useValue: { i } });

      const endpoints = container.resolveAll<Endpoint>('Endpoint');
      expect(endpoints.map((e) => e.handle())).toEqual(['users', 'orders', 'orders']);
      expect(container.resolve<FixedClock>('Clock').now()).toBe(2);
      await readyAndAnalysed();

      const nodes = nodesOf(detector);
      expect(Object.keys(nodes).filter((n) => /^(Endpoint|Clock|Request)/.test(n))).toEqual([
        'Endpoint',
        'Endpoint#2',
        'Clock',
        'Clock#2',
        'Request',
      ]);
      expect(nodes.Endpoint).toMatchObject({ className: 'UsersEndpoint', resolved: true });
      expect(nodes['Endpoint#2']).toMatchObject({ className: 'OrdersEndpoint', resolved: true });
      expect(nodes.Clock).toMatchObject({ className: 'DefaultClock', resolved: false });
      expect(nodes['Clock#2']).toMatchObject({ className: 'FixedClock', resolved: true });
      expect(detector.diagReport()!.ghostCandidates.beans).toContain('Clock');
      expect(detector.diagReport()!.ghostCandidates.beans).not.toContain('Endpoint#2');
      if (!phase2) return;
      // each instance resolveAll handed out is tracked under its own binding: called before ready, touched
      const touched = detector.tracker!.snapshot().touched;
      expect(touched).toEqual(expect.arrayContaining(['Endpoint', 'Endpoint#2', 'Clock#2']));
    } finally {
      observer.unpatch(patcher);
    }
  });
});
