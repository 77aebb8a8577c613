import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { resolveConfig } from '../../../../src/config/properties';
import type { LazyBinding } from '../../../../src/adapters/lazy/bindings';
import { STARTUP_PUBLISH_DELAY_MS, type GhostDetector } from '../../../../src/ghost/detector';
import { recordingLogger } from '../../../support/logs';
import { tempDir } from '../../../support/temp';

/**
 * The ledger every lazy container's adapter shares, driven as an adapter drives it, with a real ghost detector writing
 * real reports. Each test loads fresh copies of the ready signal and the ledger (ready is once per process).
 */
interface Loaded {
  logs: ReturnType<typeof recordingLogger>;
  detector: GhostDetector;
  ledger: import('../../../../src/adapters/lazy/bindings').LazyContainerLedger<string>;
  ready: typeof import('../../../../src/adapters/lazy/ready');
  dir: string;
}

// Each detector writes its page on the turn after ready and publishes its start-up a moment later: let them, so
// that nothing of this file requires a module into a torn-down Jest environment.
afterAll(() => new Promise((resolve) => setTimeout(resolve, STARTUP_PUBLISH_DELAY_MS + 50)));

function load(
  tracking: boolean,
  collect?: (ledger: Loaded['ledger']) => void,
  exclude?: string[],
  order?: () => Iterable<string>,
): Loaded {
  const dir = tempDir('ledger');
  let loaded!: Loaded;
  const logs = recordingLogger();
  jest.isolateModules(() => {
    // the isolated copies log through their own logger module
    (require('../../../../src/shared/logger') as typeof import('../../../../src/shared/logger')).setLogger(logs.logger);
    const { GhostDetector } =
      require('../../../../src/ghost/detector') as typeof import('../../../../src/ghost/detector');
    const { LazyContainerLedger } =
      require('../../../../src/adapters/lazy/bindings') as typeof import('../../../../src/adapters/lazy/bindings');
    const ready =
      require('../../../../src/adapters/lazy/ready') as typeof import('../../../../src/adapters/lazy/ready');
    const detector = new GhostDetector(
      resolveConfig({ report: { dir }, ghostTracking: { enabled: tracking, ...(exclude ? { exclude } : {}) } }),
    );
    const ledger: Loaded['ledger'] = new LazyContainerLedger<string>({
      framework: 'testdi',
      container: () => ({ name: 'testdi', version: '1.0.0' }),
      detector,
      entryPoints: (_key, binding) => (binding.role === 'controller' ? ['a route'] : []),
      collect: () => collect?.(ledger),
      ...(order !== undefined ? { order } : {}),
    });
    loaded = { logs, detector, ledger, ready, dir };
  });
  return loaded;
}

const binding = (token: string, extra: Partial<LazyBinding> = {}): LazyBinding => ({
  token,
  kind: 'class',
  scope: 'singleton',
  role: 'provider',
  framework: false,
  ...extra,
});

/**
 * Turns enough for the analysis after ready: it scans `require.cache` on turns of its own (one here, where jest's is
 * small), settles the bindings' origins on the next, and runs on the one after.
 */
const ANALYSIS_TURNS = 5;
const settle = async (): Promise<void> => {
  for (let turn = 0; turn < ANALYSIS_TURNS; turn++) await new Promise((resolve) => setImmediate(resolve));
};

class Service {
  work(): number {
    return 1;
  }
}

describe('LazyContainerLedger', () => {
  it("names bindings of one token in the adapter's order, not the order they were bound in", async () => {
    const { ledger, ready, dir } = load(false, undefined, undefined, () => ['first', 'second']);
    // bound out of order, as a binding first activated before ready is bound at that activation; one class for
    // both, so that only the order tells them apart (told apart by class, their names would not depend on it)
    ledger.bind('second', binding('Plugin', { className: 'Plugin', scope: 'transient' }));
    ledger.bind('first', binding('Plugin', { className: 'Plugin', scope: 'singleton' }));
    ready.diagReady();
    await settle();
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'diag-report.json'), 'utf8'));
    const names = Object.fromEntries(report.graph.nodes.map((n: any) => [n.scope, n.name]));
    expect(names.singleton).toBe('Plugin');
    expect(names.transient).toBe('Plugin#2');
  });

  it('at ready writes the never-resolved application bindings as candidates, with what collect adds and the edges', async () => {
    const { ledger, ready, dir } = load(false, (l) => {
      l.bind('Found', binding('Found'));
      l.dependsOn('Found', 'Used', 'constructor');
    });
    ledger.bind('Used', binding('Used'));
    ledger.bind('Dead', binding('Dead', { scope: 'transient' }));
    ledger.bind('Library', binding('Library', { framework: true }));
    ledger.bind('Controller', binding('Controller', { role: 'controller' }));
    ledger.dependsOn('Controller', 'Used', 'constructor');
    expect(ledger.resolved('Used', new Service())).toBe(true);
    expect(ledger.resolved('Unknown', {})).toBe(false);

    ready.diagReady();
    await settle();
    expect(ledger.readyDone).toBe(true);
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'diag-report.json'), 'utf8'));
    expect(report.framework).toBe('testdi');
    expect(report.container).toEqual({ name: 'testdi', version: '1.0.0' });
    expect(report.ghostCandidates.beans).toEqual(['Dead', 'Found']);
    expect(report.graph.edges).toEqual(
      expect.arrayContaining([
        { from: 'Found', to: 'Used', kind: 'constructor' },
        { from: 'Controller', to: 'Used', kind: 'constructor' },
      ]),
    );
  });

  it('with tracking, keeps neverResolved current, tracks singletons resolved before and after ready, and late bindings too', async () => {
    const { ledger, ready, detector } = load(true);
    const early = new Service();
    ledger.bind('Early', binding('Early'));
    ledger.bind('Later', binding('Later'));
    ledger.bind('Transient', binding('Transient', { scope: 'transient' }));
    ledger.bind('Route', binding('Route', { role: 'controller' }));
    ledger.resolved('Early', early);

    ready.diagReady();
    await settle();
    const tracker = detector.tracker!;
    expect(tracker.snapshot()).toMatchObject({ framework: 'testdi', neverResolved: ['Later', 'Transient'] });
    expect(tracker.isTracked('Early')).toBe(true);
    early.work();
    expect(tracker.isTouched('Early')).toBe(true);

    const later = new Service();
    ledger.resolved('Later', later);
    ledger.resolved('Transient', new Service());
    expect(tracker.snapshot().neverResolved).toEqual([]);
    expect(tracker.isTracked('Later')).toBe(true);
    expect(tracker.snapshot().untrackable).toMatchObject({ Transient: 'non-singleton' });

    // a binding registered after ready is expected under its token, and resolved like the others
    ledger.bind('Late', binding('Late'));
    expect(tracker.snapshot().neverResolved).toEqual(['Late']);
    ledger.resolved('Late', new Service());
    expect(tracker.snapshot().neverResolved).toEqual([]);
  });

  it.each([
    ['no exclude list', undefined],
    ['an exclude list that names another bean', ['Other']],
  ])(
    'with tracking and %s, a singleton resolved before ready is tracked at that resolution: its calls before ready count, at their time',
    async (_label, exclude) => {
      const { ledger, ready, detector } = load(true, undefined, exclude);
      class Migrator {
        run(): string {
          return 'migrated';
        }
        rollback(): string {
          return 'rolled back';
        }
      }
      class LibraryCache {
        get(): number {
          return 0;
        }
      }
      const libraryGet = LibraryCache.prototype.get;
      const tracker = detector.tracker!;
      const uses: Array<[string, number]> = [];
      tracker.onUse((name, at) => uses.push([name, at]));
      ledger.bind('Migrator', binding('Migrator'));
      ledger.bind('Cache', binding('Cache', { framework: true }));
      ledger.bind('Transient', binding('Transient', { scope: 'transient' }));
      const migrator = new Migrator();
      ledger.resolved('Migrator', migrator);
      ledger.resolved('Cache', new LibraryCache());
      ledger.resolved('Transient', new Service());
      // the application's start-up, before its server listens: the only call this bean ever gets
      expect(migrator.run()).toBe('migrated');
      const calledBy = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 30));

      ready.diagReady();
      await settle();
      // told under its name at ready, with the method called and the one never called, at the call's time
      expect(tracker.isTouched('Migrator')).toBe(true);
      const methods = tracker.methodsOf('Migrator')!;
      expect(methods.get('run')).toBeLessThanOrEqual(calledBy);
      expect(methods.get('rollback')).toBeUndefined();
      expect(uses).toEqual([['Migrator', expect.any(Number)]]);
      expect(uses[0]![1]).toBeLessThanOrEqual(calledBy);
      expect(tracker.snapshot().untouched).not.toContain('Migrator');
      // a library's binding is never wrapped, and it is no bean of the application's
      expect(LibraryCache.prototype.get).toBe(libraryGet);
      expect(tracker.isTracked('Cache')).toBe(false);
      // a transient binding resolved before ready says why it is not tracked
      expect(tracker.snapshot().untrackable).toMatchObject({ Transient: 'non-singleton' });
    },
  );

  it('with tracking, a binding resolved before ready whose token is excluded is never wrapped', async () => {
    const { ledger, ready, detector } = load(true, undefined, ['Skipped']);
    class Skipped {
      work(): number {
        return 1;
      }
    }
    const work = Skipped.prototype.work;
    ledger.bind('Skipped', binding('Skipped'));
    ledger.resolved('Skipped', new Skipped());
    expect(Skipped.prototype.work).toBe(work);
    ready.diagReady();
    await settle();
    expect(Skipped.prototype.work).toBe(work);
    expect(detector.tracker!.snapshot().untrackable).toMatchObject({ Skipped: 'excluded' });
  });

  it("with tracking, a singleton resolved before ready that its origin says is a library's gets its methods back at ready", async () => {
    const { ledger, ready, detector } = load(true);
    // wrapped at its resolution like any singleton, since whose it is is known at ready only (its definedBy's origin)
    class Emitter extends EventEmitter {
      fire(): boolean {
        return this.emit('fired');
      }
    }
    const fire = Emitter.prototype.fire;
    ledger.bind('Emitter', binding('Emitter', { definedBy: EventEmitter }));
    ledger.resolved('Emitter', new Emitter());
    expect(Emitter.prototype.fire).not.toBe(fire);

    ready.diagReady();
    await settle();
    expect(Emitter.prototype.fire).toBe(fire);
    expect(detector.tracker!.isTracked('Emitter')).toBe(false);
  });

  it('re-registering a key updates the binding and keeps its resolution', async () => {
    const { ledger, ready, dir } = load(false);
    ledger.bind('Token', binding('Token', { kind: 'class' }));
    ledger.resolved('Token', {});
    ledger.bind('Token', binding('Token', { kind: 'value' }));
    ready.diagReady();
    await settle();
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'diag-report.json'), 'utf8'));
    expect(report.graph.nodes).toEqual([expect.objectContaining({ name: 'Token', kind: 'value', resolved: true })]);
    expect(report.ghostCandidates.count).toBe(0);
  });

  it("an adapter's failing collect is logged, and the report is still written", async () => {
    const { ledger, ready, dir, logs } = load(false, () => {
      throw new Error('cannot read the container');
    });
    ledger.bind('Dead', binding('Dead'));
    ready.diagReady();
    await settle();
    expect(logs.warnings.join('\n')).toMatch(/testdi: reading its bindings failed: cannot read the container/);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'diag-report.json'), 'utf8')).ghostCandidates.beans).toEqual([
      'Dead',
    ]);
  });
});
