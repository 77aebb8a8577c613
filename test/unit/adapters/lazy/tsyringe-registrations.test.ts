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

function nodesOf(detector: GhostDetector): Record<string, { className?: string; resolved?: boolean; token?: string }> {
  return Object.fromEntries(detector.diagReport()!.graph.nodes.map((n) => [n.name, n]));
}

afterAll(async () => {
  // the start-up timeline publishes a moment after ready: let it, so that no timer outlives the file
  await new Promise((resolve) => setTimeout(resolve, STARTUP_PUBLISH_DELAY_MS + 50));
});

/** Real tsyringe, observed afresh (its global container and the ready signal are the module registry's). */
function observed(phase2: boolean): {
  tsyringe: Tsyringe;
  detector: GhostDetector;
  unpatch(): void;
} {
  jest.resetModules();
  const { TsyringeObserver } =
    require('../../../../src/adapters/lazy/tsyringe/container-observer') as typeof import('../../../../src/adapters/lazy/tsyringe/container-observer');
  const tsyringe = require('tsyringe') as Tsyringe;
  const detector = new GhostDetector(
    resolveConfig({ report: { dir: tempDir('tsyringe-registrations') }, ghostTracking: { enabled: phase2 } }),
  );
  const observer = new TsyringeObserver(detector);
  observer.patch(require('tsyringe/dist/cjs/dependency-container'), '4.10.0', patcher);
  return { tsyringe, detector, unpatch: () => observer.unpatch(patcher) };
}

describe.each([false, true])('tsyringe, one token registered several times (Phase 2 %s)', (phase2) => {
  it('makes a binding of each class, tells each what resolveAll and resolve handed out, and keeps repeats as one', async () => {
    const { tsyringe, detector, unpatch } = observed(phase2);
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
      // named by class, not by registration order: a name stays when another endpoint file comes or goes
      expect(Object.keys(nodes).filter((n) => /^(Endpoint|Clock|Request)/.test(n))).toEqual([
        'Endpoint[UsersEndpoint]',
        'Endpoint[OrdersEndpoint]',
        'Clock[DefaultClock]',
        'Clock[FixedClock]',
        'Request',
      ]);
      expect(nodes['Endpoint[UsersEndpoint]']).toMatchObject({ className: 'UsersEndpoint', resolved: true });
      expect(nodes['Endpoint[OrdersEndpoint]']).toMatchObject({ className: 'OrdersEndpoint', resolved: true });
      expect(nodes['Clock[DefaultClock]']).toMatchObject({ resolved: false });
      expect(nodes['Clock[FixedClock]']).toMatchObject({ resolved: true });
      expect(detector.diagReport()!.ghostCandidates.beans).toContain('Clock[DefaultClock]');
      expect(detector.diagReport()!.ghostCandidates.beans).not.toContain('Endpoint[OrdersEndpoint]');
      if (!phase2) return;
      // each instance resolveAll handed out is tracked under its own binding: called before ready, touched
      const touched = detector.tracker!.snapshot().touched;
      expect(touched).toEqual(
        expect.arrayContaining(['Endpoint[UsersEndpoint]', 'Endpoint[OrdersEndpoint]', 'Clock[FixedClock]']),
      );
    } finally {
      unpatch();
    }
  });

  it("keeps a token's factory apart from its classes: the binding resolve used is the one resolved", async () => {
    const { tsyringe, detector, unpatch } = observed(phase2);
    try {
      class PgRepo {
        find(): string {
          return 'pg';
        }
      }
      class MemRepo {
        find(): string {
          return 'mem';
        }
      }
      const container = tsyringe.container.createChildContainer();
      container.register('Repo', { useClass: PgRepo });
      container.register('Repo', { useClass: MemRepo });
      container.register('Repo', { useFactory: () => ({ find: () => 'factory' }) });
      // an alias to the token may be handed any of its bindings
      container.register('Store', { useToken: 'Repo' });
      expect(container.resolve<{ find(): string }>('Repo').find()).toBe('factory');
      await readyAndAnalysed();
      const nodes = Object.values(nodesOf(detector)).filter((n: any) => n.token === 'Repo') as any[];
      expect(nodes.map((n) => [n.kind, n.className, n.resolved])).toEqual([
        ['class', 'PgRepo', false],
        ['class', 'MemRepo', false],
        ['factory', undefined, true],
      ]);
      const report = detector.diagReport()!;
      const factory = nodes.find((n) => n.kind === 'factory')!.name;
      expect(report.ghostCandidates.beans).not.toContain(factory);
      const aliasEdges = report.graph.edges.filter((e) => e.kind === 'alias' && e.from === 'Store').map((e) => e.to);
      expect(aliasEdges.sort()).toEqual(nodes.map((n) => n.name).sort());
    } finally {
      unpatch();
    }
  });

  it('resolveAll of a class never registered (tsyringe builds any @injectable()) reads resolved', async () => {
    const { tsyringe, detector, unpatch } = observed(phase2);
    try {
      class AuditPlugin {
        audit(): number {
          return 1;
        }
      }
      tsyringe.injectable()(AuditPlugin);
      const container = tsyringe.container.createChildContainer();
      expect(container.resolveAll(AuditPlugin).length).toBe(1);
      await readyAndAnalysed();
      expect(nodesOf(detector).AuditPlugin).toMatchObject({ resolved: true });
    } finally {
      unpatch();
    }
  });

  it('gives a token at most 32 bindings, however many classes are made and registered at run time', async () => {
    const { tsyringe, detector, unpatch } = observed(phase2);
    try {
      class Handler {
        handle(): number {
          return 0;
        }
      }
      const container = tsyringe.container.createChildContainer();
      container.register('Handler', { useClass: Handler });
      // a child container per request, each registering a class made for it (the same cap holds after ready,
      // where the report read here is not rewritten)
      for (let i = 0; i < 100; i++) {
        const child = container.createChildContainer();
        child.register('Handler', { useClass: class extends Handler {} });
        child.resolve('Handler');
      }
      await readyAndAnalysed();
      const handlers = Object.values(nodesOf(detector)).filter((n: any) => n.token === 'Handler');
      expect(handlers.length).toBe(32);
    } finally {
      unpatch();
    }
  });
});

it('says a binding nothing resolved was never resolved, where its verdict read "not tracked" (Phase 2)', async () => {
  const { tsyringe, detector, unpatch } = observed(true);
  try {
    class ShutterRoleCheck {
      intercept(): void {}
    }
    tsyringe.container.createChildContainer().register('ShutterRoleCheck', { useClass: ShutterRoleCheck });
    await readyAndAnalysed();
    const snapshot = detector.ghostSnapshot() as {
      neverResolved?: string[];
      verdicts?: Array<{ name: string; why?: string }>;
    };
    expect(snapshot.neverResolved).toContain('ShutterRoleCheck');
    expect(snapshot.verdicts?.find((v) => v.name === 'ShutterRoleCheck')?.why).toBe(
      'Phase 2 cannot tell: never resolved, so no instance was made to watch',
    );
  } finally {
    unpatch();
  }
});
