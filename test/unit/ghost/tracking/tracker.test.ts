import 'reflect-metadata';
import { GhostTracker, GHOST_DISCLAIMER, mergeGhostReports } from '../../../../src/ghost/tracking/tracker';
import type { GhostReport } from '../../../../src/ghost/tracking/types';
import { captureLogs } from './helpers';

class Service {
  run(): string {
    return 'ran';
  }
}
/** Before any test tracked a Service: while one is pending, the prototype holds a wrapper. */
const serviceRun = Service.prototype.run;

describe('skip reasons', () => {
  it('frozen, sealed and non-extensible instances are final-class and left alone', () => {
    const tracker = new GhostTracker();
    const frozen = Object.freeze(new Service());
    const sealed = Object.seal(new Service());
    const closed = Object.preventExtensions(new Service());
    expect(tracker.track('frozen', frozen)).toEqual({ status: 'untrackable', name: 'frozen', reason: 'final-class' });
    expect(tracker.track('sealed', sealed)).toMatchObject({ reason: 'final-class' });
    expect(tracker.track('closed', closed)).toMatchObject({ reason: 'final-class' });
    for (const s of [frozen, sealed, closed]) {
      expect(Object.getPrototypeOf(s)).toBe(Service.prototype);
      expect(s.run()).toBe('ran');
    }
    expect(tracker.isTracked('frozen')).toBe(false);
  });

  it('a class whose prototype is frozen, sealed or closed is frozen-prototype, reported without a warning and unchanged', () => {
    class Base {
      inherited(): string {
        return 'base';
      }
    }
    const lock: Record<string, (o: object) => unknown> = {
      frozen: Object.freeze,
      sealed: Object.seal,
      closed: Object.preventExtensions,
    };
    const tracker = new GhostTracker();
    for (const [name, how] of Object.entries(lock)) {
      // A fresh class per lock: the wrappers would live on its prototype.
      class Locked extends Base {
        own(): string {
          return 'own';
        }
      }
      how(Locked.prototype);
      const before = Object.getOwnPropertyDescriptors(Locked.prototype);
      const bean = new Locked();
      const { result, warnings } = captureLogs(() => tracker.track(name, bean));
      expect(result).toEqual({ status: 'untrackable', name, reason: 'frozen-prototype' });
      expect(warnings).toEqual([]);
      expect(Object.getOwnPropertyDescriptors(Locked.prototype)).toEqual(before);
      expect(Reflect.ownKeys(bean)).toEqual([]);
      expect([bean.own(), bean.inherited()]).toEqual(['own', 'base']);
    }
    expect(tracker.snapshot()).toMatchObject({
      trackedCount: 0,
      untrackable: { frozen: 'frozen-prototype', sealed: 'frozen-prototype', closed: 'frozen-prototype' },
    });
  });

  it('a frozen base class does not stop its subclass from being tracked', () => {
    class FrozenBase {
      inherited(): string {
        return 'base';
      }
    }
    Object.freeze(FrozenBase.prototype);
    class Open extends FrozenBase {}
    const tracker = new GhostTracker();
    const bean = new Open();
    expect(tracker.track('open', bean)).toMatchObject({ status: 'tracked', methods: 1 });
    expect(bean.inherited()).toBe('base');
    expect(tracker.isTouched('open')).toBe(true);
  });

  it('a Proxy of a function kept in a field is not taken for a method, and none of its traps run', () => {
    const trapped: string[] = [];
    const handler: ProxyHandler<() => string> = {};
    for (const trap of [
      'apply',
      'get',
      'has',
      'ownKeys',
      'getOwnPropertyDescriptor',
      'getPrototypeOf',
      'defineProperty',
    ] as const) {
      (handler as Record<string, unknown>)[trap] = () => {
        trapped.push(trap);
        throw new Error(`${trap} refused`);
      };
    }
    const injected = new Proxy(() => 'proxied', handler);
    class Holder {
      constructor(readonly provider: () => string) {}
      run(): string {
        return 'ran';
      }
    }
    const holder = new Holder(injected);
    const tracker = new GhostTracker();
    const { result, warnings } = captureLogs(() => tracker.track('holder', holder));
    expect(result).toMatchObject({ status: 'tracked', methods: 1 });
    expect(warnings).toEqual([]);
    expect(trapped).toEqual([]);
    expect(holder.provider).toBe(injected);
    holder.run();
    expect(tracker.isTouched('holder')).toBe(true);
  });

  it('a Proxy is already-proxied and none of its traps run', () => {
    const trapped: string[] = [];
    const handler: ProxyHandler<Service> = {};
    for (const trap of [
      'get',
      'set',
      'has',
      'ownKeys',
      'getOwnPropertyDescriptor',
      'defineProperty',
      'getPrototypeOf',
      'setPrototypeOf',
      'isExtensible',
      'preventExtensions',
      'deleteProperty',
    ] as const) {
      (handler as Record<string, unknown>)[trap] = (...args: unknown[]) => {
        trapped.push(trap);
        return (Reflect as unknown as Record<string, (...a: unknown[]) => unknown>)[trap]!(...args);
      };
    }
    const proxy = new Proxy(new Service(), handler);
    const tracker = new GhostTracker();
    expect(tracker.track('proxied', proxy)).toMatchObject({ status: 'untrackable', reason: 'already-proxied' });
    expect(trapped).toEqual([]);
  });

  it('functions and infrastructure are factory-bean', () => {
    const tracker = new GhostTracker();
    const factory = (): Service => new Service();
    expect(tracker.track('factory', factory)).toMatchObject({ reason: 'factory-bean' });
    expect(tracker.track('klass', Service)).toMatchObject({ reason: 'factory-bean' });
    const infra = new Service();
    expect(tracker.track('ModuleRef', infra, { infrastructure: true })).toMatchObject({ reason: 'factory-bean' });
    expect(Object.getPrototypeOf(infra)).toBe(Service.prototype);
  });

  it('request-scoped and transient beans are non-singleton; singleton scope is tracked', () => {
    const tracker = new GhostTracker();
    expect(tracker.track('req', new Service(), { scope: 'request' })).toMatchObject({ reason: 'non-singleton' });
    expect(tracker.track('tr', new Service(), { scope: 'transient' })).toMatchObject({ reason: 'non-singleton' });
    expect(tracker.track('single', new Service(), { scope: 'singleton' })).toMatchObject({ status: 'tracked' });
  });

  it('excluded names are not wrapped', () => {
    const tracker = new GhostTracker({ exclude: ['Secret'] });
    const s = new Service();
    expect(tracker.track('Secret', s)).toMatchObject({ reason: 'excluded' });
    expect(Object.getPrototypeOf(s)).toBe(Service.prototype);
    s.run();
    expect(tracker.isTouched('Secret')).toBe(false);
  });

  it('values without methods are no-methods', () => {
    const tracker = new GhostTracker();
    expect(tracker.track('num', 42)).toMatchObject({ reason: 'no-methods' });
    expect(tracker.track('nil', null)).toMatchObject({ reason: 'no-methods' });
    expect(tracker.track('cfg', { port: 80 })).toMatchObject({ reason: 'no-methods' });
    expect(tracker.track('bare', Object.create(null))).toMatchObject({ reason: 'no-methods' });
  });

  it('framework beans are counted once per name, never wrapped, never named', () => {
    const tracker = new GhostTracker();
    const s = new Service();
    expect(tracker.track('Reflector', s, { framework: true })).toEqual({ status: 'framework', name: 'Reflector' });
    tracker.track('Reflector', new Service(), { framework: true });
    tracker.track('HttpAdapterHost', new Service(), { framework: true });
    expect(Object.getPrototypeOf(s)).toBe(Service.prototype);
    const report = tracker.snapshot();
    expect(report.frameworkSkipped).toBe(2);
    expect(JSON.stringify(report)).not.toContain('Reflector');
  });
});

describe('a wrapping error', () => {
  it('becomes proxy-failed with a warning, and every partial change is rolled back', () => {
    class Mixed {
      early = (): string => 'early';
      method(): string {
        return 'm';
      }
    }
    const instance = new Mixed();
    const early = instance.early;
    // Own keys are wrapped in definition order: `early` succeeds, then `locked` cannot be replaced.
    const locked = (): string => 'locked';
    Object.defineProperty(instance, 'locked', {
      value: locked,
      writable: false,
      configurable: false,
      enumerable: true,
    });

    const tracker = new GhostTracker();
    const { result, warnings } = captureLogs(() => tracker.track('mixed', instance));
    expect(result.status).toBe('untrackable');
    expect(result.status === 'untrackable' && result.reason).toMatch(/^proxy-failed: .+/);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('mixed');

    expect(instance.early).toBe(early);
    expect((instance as unknown as { locked: unknown }).locked).toBe(locked);
    expect(Object.getPrototypeOf(instance)).toBe(Mixed.prototype);
    expect(instance.method()).toBe('m');
    expect(tracker.isTracked('mixed')).toBe(false);
    expect(tracker.snapshot()).toMatchObject({ trackedCount: 0, untrackableCount: 1 });
  });
});

describe('double tracking', () => {
  it('the same object under the same name is refused without stacking wrappers', () => {
    const original = serviceRun;
    const tracker = new GhostTracker();
    const s = new Service();
    expect(tracker.track('s', s)).toMatchObject({ status: 'tracked', methods: 1 });
    const wrapper = s.run;
    const ownKeys = Reflect.ownKeys(s);
    expect(tracker.track('s', s)).toEqual({ status: 'already-tracked', name: 's' });
    expect(Reflect.ownKeys(s)).toEqual(ownKeys);
    expect(s.run).toBe(wrapper);
    expect(Object.getPrototypeOf(wrapper)).not.toBe(wrapper); // one wrapper, not a wrapper of a wrapper
    s.run();
    expect(s.run).toBe(original);
    expect(tracker.snapshot().trackedCount).toBe(1);
  });

  it('the same object under another name (an alias) shares its touches', () => {
    const tracker = new GhostTracker();
    const s = new Service();
    tracker.track('Service', s);
    expect(tracker.track('ServiceAlias', s)).toMatchObject({ status: 'tracked', aliasOf: 'Service' });
    s.run();
    expect(tracker.isTouched('Service')).toBe(true);
    expect(tracker.isTouched('ServiceAlias')).toBe(true);
    // An alias registered after the touch is touched at once.
    expect(tracker.track('LateAlias', s)).toMatchObject({ status: 'tracked' });
    expect(tracker.isTouched('LateAlias')).toBe(true);
  });

  it('a plain object (own methods only) keeps its aliases before and after its touch', () => {
    const tracker = new GhostTracker();
    const plain = { run: (): string => 'ran' };
    tracker.track('Plain', plain);
    expect(tracker.track('Plain', plain)).toEqual({ status: 'already-tracked', name: 'Plain' });
    expect(tracker.track('PlainAlias', plain)).toMatchObject({ status: 'tracked', aliasOf: 'Plain' });
    expect(plain.run()).toBe('ran');
    expect(tracker.track('LatePlainAlias', plain)).toMatchObject({ status: 'tracked', aliasOf: 'Plain' });
    expect(tracker.snapshot()).toMatchObject({ untouched: [], touched: ['LatePlainAlias', 'Plain', 'PlainAlias'] });
  });

  it('a touched bean handed in again is not wrapped again', () => {
    const tracker = new GhostTracker();
    const s = new Service();
    tracker.track('Service', s);
    s.run();
    const direct = Service.prototype.run;
    expect(tracker.track('Service', s)).toEqual({ status: 'already-tracked', name: 'Service' });
    expect(Service.prototype.run).toBe(direct);
  });

  it('an object another tracker instruments is left to it, and its names stay apart', () => {
    const first = new GhostTracker();
    const second = new GhostTracker();
    const s = new Service();
    first.track('Mine', s);
    expect(second.track('Theirs', s)).toMatchObject({
      status: 'untrackable',
      reason: expect.stringMatching(/another tracker/),
    });
    s.run();
    expect(first.snapshot()).toMatchObject({ touched: ['Mine'], untouched: [] });
    expect(second.snapshot()).toMatchObject({ trackedCount: 0, touched: [] });
  });

  it('two instances under one name share one flag; the prototype is restored once both were called', () => {
    class Twin {
      run(): string {
        return 'ran';
      }
    }
    const original = Twin.prototype.run;
    const tracker = new GhostTracker();
    const a = new Twin();
    const b = new Twin();
    tracker.track('dup', a);
    tracker.track('dup', b);
    a.run();
    expect(tracker.isTouched('dup')).toBe(true);
    expect(Twin.prototype.run).not.toBe(original);
    expect(b.run()).toBe('ran');
    expect(Twin.prototype.run).toBe(original);
    expect(Object.prototype.hasOwnProperty.call(b, 'run')).toBe(false);
    expect(tracker.snapshot()).toMatchObject({ trackedCount: 1, touched: ['dup'] });
  });

  it('a name with one untrackable instance is reported untrackable, not untouched', () => {
    const tracker = new GhostTracker();
    tracker.track('mixed', new Service());
    tracker.track('mixed', Object.freeze(new Service()));
    expect(tracker.snapshot()).toMatchObject({ trackedCount: 0, untrackable: { mixed: 'final-class' } });
  });
});

describe('reflect-metadata on wrappers', () => {
  const CRON = 'SCHEDULE_CRON_OPTIONS';
  const EVENT = 'EVENT_LISTENER_METADATA';

  // Like NestJS's SetMetadata (used by @Cron, @OnEvent): metadata is defined on the method function itself.
  const onFunction =
    (key: string, value: unknown): MethodDecorator =>
    (_target, _key, descriptor) => {
      Reflect.defineMetadata(key, value, descriptor.value as object);
    };

  class Jobs {
    @onFunction(CRON, { cronTime: '* * * * *' })
    @onFunction(EVENT, [{ event: 'order.created' }])
    @Reflect.metadata('keyed', 'on-prototype')
    tick(a: number, b: string): string {
      return `${a}${b}`;
    }
  }
  const jobsTick = Jobs.prototype.tick;

  it('a wrapper carries the original method metadata, name and length', () => {
    const original = Jobs.prototype.tick;
    const tracker = new GhostTracker();
    const bean = new Jobs();
    tracker.track('jobs', bean);
    const wrapper = bean.tick; // what an explorer reads: instance[methodName]
    expect(wrapper).not.toBe(original);
    expect(Reflect.getMetadata(CRON, wrapper)).toEqual({ cronTime: '* * * * *' });
    expect(Reflect.getMetadata(EVENT, wrapper)).toEqual([{ event: 'order.created' }]);
    expect(Reflect.getOwnMetadataKeys(wrapper).sort()).toEqual(Reflect.getOwnMetadataKeys(original).sort());
    expect(wrapper.name).toBe('tick');
    expect(wrapper.length).toBe(2);
    expect(tracker.isTouched('jobs')).toBe(false); // reading metadata is not a touch
  });

  it('a wrapper has the length of its original at every arity and forwards every argument passed', () => {
    /* eslint-disable @typescript-eslint/no-unused-vars */
    class Arities {
      zero(): unknown[] {
        return [...arguments];
      }
      one(a: number): unknown[] {
        return [...arguments];
      }
      two(a: number, b: number): unknown[] {
        return [...arguments];
      }
      three(a: number, b: number, c: number): unknown[] {
        return [...arguments];
      }
      four(a: number, b: number, c: number, d: number): unknown[] {
        return [...arguments];
      }
      five(a: number, b: number, c: number, d: number, e: number): unknown[] {
        return [...arguments];
      }
      seven(a: number, b: number, c: number, d: number, e: number, f: number, g: number): unknown[] {
        return [...arguments];
      }
      defaulted(a: number, b = 2, ...rest: number[]): unknown[] {
        return [a, b, ...rest];
      }
    }
    const keys = ['zero', 'one', 'two', 'three', 'four', 'five', 'seven', 'defaulted'] as const;
    const originals = keys.map((k) => Arities.prototype[k]);
    const bean = new Arities();
    new GhostTracker().track('arities', bean);
    const wrappers = keys.map((k) => bean[k] as Function); // all of them before the first call restores them
    keys.forEach((k, i) => {
      const wrapper = wrappers[i]!;
      expect(wrapper).not.toBe(originals[i]);
      expect(Object.getOwnPropertyDescriptor(wrapper, 'length')).toEqual(
        Object.getOwnPropertyDescriptor(originals[i]!, 'length'),
      );
      expect(Object.getOwnPropertyDescriptor(wrapper, 'name')).toEqual(
        Object.getOwnPropertyDescriptor(originals[i]!, 'name'),
      );
      // Fewer and more arguments than declared reach the original unchanged.
      expect(wrapper.call(bean, 1)).toEqual(k === 'defaulted' ? [1, 2] : [1]);
      expect(wrapper.call(bean, 1, 2, 3, 4, 5, 6, 7, 8, 9)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    });
  });

  it('metadata keyed by prototype and method name is still found, walking or own', () => {
    const bean = new Jobs();
    const expected = Reflect.getMetadata('design:paramtypes', Jobs.prototype, 'tick');
    expect(expected).toEqual([Number, String]);
    new GhostTracker().track('jobs', bean);
    expect(Reflect.getMetadata('design:paramtypes', bean, 'tick')).toEqual(expected);
    expect(Reflect.getOwnMetadata('design:paramtypes', Object.getPrototypeOf(bean), 'tick')).toEqual(expected);
    expect(Reflect.getMetadata('keyed', bean, 'tick')).toBe('on-prototype');
  });

  it('metadata attached to a wrapper before the first touch is found on the restored method', () => {
    const original = jobsTick;
    const bean = new Jobs();
    new GhostTracker().track('jobs', bean);
    Reflect.defineMetadata('late', 1, bean.tick);
    bean.tick(1, 'a');
    expect(bean.tick).toBe(original);
    expect(Reflect.getMetadata('late', bean.tick)).toBe(1);
  });

  it('own properties that libraries set on handler functions are copied', () => {
    const handler = Object.assign((): number => 1, { isHandler: true });
    const bean = { handler };
    new GhostTracker().track('h', bean);
    expect((bean.handler as typeof handler).isHandler).toBe(true);
  });
});

describe('first-touch listeners', () => {
  it('are called once per name, synchronously in the touching call; errors are swallowed', () => {
    const tracker = new GhostTracker();
    const calls: string[] = [];
    tracker.onFirstTouch((name) => calls.push(name));
    tracker.onFirstTouch(() => {
      throw new Error('listener bug');
    });
    const a = new Service();
    const b = new Service();
    tracker.track('a', a);
    tracker.track('b', b);
    expect(a.run()).toBe('ran');
    expect(calls).toEqual(['a']);
    a.run();
    b.run();
    b.run();
    expect(calls).toEqual(['a', 'b']);
  });

  it('can be removed', () => {
    const tracker = new GhostTracker();
    const calls: string[] = [];
    const off = tracker.onFirstTouch((name) => calls.push(name));
    off();
    const a = new Service();
    tracker.track('a', a);
    a.run();
    expect(calls).toEqual([]);
    expect(tracker.isTouched('a')).toBe(true);
  });
});

describe('snapshot', () => {
  it('counts every category, sorts names and carries the disclaimer', () => {
    const tracker = new GhostTracker({ exclude: ['Excluded'] });
    const zeta = new Service();
    const alpha = new Service();
    tracker.track('Zeta', zeta);
    tracker.track('Alpha', alpha);
    tracker.track('Mid', new Service());
    tracker.track('Excluded', new Service());
    tracker.track('Frozen', Object.freeze(new Service()));
    tracker.track('Req', new Service(), { scope: 'request' });
    tracker.track('Core', new Service(), { framework: true });
    zeta.run();
    alpha.run();

    const report = tracker.snapshot();
    expect(report).toEqual({
      disclaimer: GHOST_DISCLAIMER,
      trackedCount: 3,
      touchedCount: 2,
      untouchedCount: 1,
      untouched: ['Mid'],
      touched: ['Alpha', 'Zeta'],
      untrackableCount: 3,
      untrackable: { Excluded: 'excluded', Frozen: 'final-class', Req: 'non-singleton' },
      frameworkSkipped: 1,
      // A method's first call is its class's: Mid's `run` ran, on Zeta and Alpha.
      methods: {
        Alpha: { run: expect.any(String) },
        Mid: { run: expect.any(String) },
        Zeta: { run: expect.any(String) },
      },
    });
    expect(Object.keys(report.untrackable)).toEqual(['Excluded', 'Frozen', 'Req']);
    expect(report.disclaimer).toMatch(/not .*unused/);
    expect(tracker.ghostSnapshot()).toEqual(report);
    expect(tracker.touchedNames()).toEqual(['Alpha', 'Zeta']);
  });

  it('is a copy: reading it changes nothing and later touches do not mutate an old snapshot', () => {
    const tracker = new GhostTracker();
    const s = new Service();
    tracker.track('s', s);
    const before = tracker.snapshot();
    expect(tracker.isTouched('s')).toBe(false);
    s.run();
    expect(before.untouched).toEqual(['s']);
    expect(tracker.snapshot().touched).toEqual(['s']);
  });
});

describe('mergeGhostReports', () => {
  const base = (over: Partial<GhostReport>): GhostReport => ({
    disclaimer: GHOST_DISCLAIMER,
    trackedCount: 0,
    touchedCount: 0,
    untouchedCount: 0,
    untouched: [],
    touched: [],
    untrackableCount: 0,
    untrackable: {},
    frameworkSkipped: 0,
    ...over,
  });

  it('touched anywhere wins, untrackable anywhere wins, framework count is the max', () => {
    const merged = mergeGhostReports([
      base({ touched: ['A'], untouched: ['B', 'C'], untrackable: { D: 'excluded' }, frameworkSkipped: 4 }),
      base({ touched: ['B'], untouched: ['A', 'C', 'D'], untrackable: { E: 'final-class' }, frameworkSkipped: 4 }),
    ]);
    expect(merged).toMatchObject({
      trackedCount: 3,
      touched: ['A', 'B'],
      untouched: ['C'],
      untrackable: { D: 'excluded', E: 'final-class' },
      untrackableCount: 2,
      frameworkSkipped: 4,
    });
  });

  it('keeps in neverResolved only what no process resolved, and the framework of the first that names one', () => {
    const merged = mergeGhostReports([
      base({}),
      base({ framework: 'tsyringe', neverResolved: ['Legacy', 'Mailer', 'Orders'], neverResolvedCount: 3 }),
      base({ framework: 'tsyringe', neverResolved: ['Legacy', 'Orders', 'Reports'], neverResolvedCount: 3 }),
    ]);
    expect(merged).toMatchObject({ framework: 'tsyringe', neverResolved: ['Legacy', 'Orders'], neverResolvedCount: 2 });
    expect(mergeGhostReports([base({})])).not.toHaveProperty('neverResolved');
  });

  it('of nothing is an empty report with the disclaimer', () => {
    expect(mergeGhostReports([])).toMatchObject({ trackedCount: 0, disclaimer: GHOST_DISCLAIMER });
  });
});

describe('neverResolved (lazy containers)', () => {
  it('lists the expected bindings until each is resolved, and names the framework', () => {
    const tracker = new GhostTracker();
    expect(tracker.snapshot()).not.toHaveProperty('neverResolved');
    const v0 = tracker.version;
    tracker.setFramework('tsyringe');
    tracker.expectResolution(['Orders', 'Legacy', 'Mailer']);
    expect(tracker.version).toBeGreaterThan(v0);
    expect(tracker.snapshot()).toMatchObject({
      framework: 'tsyringe',
      neverResolved: ['Legacy', 'Mailer', 'Orders'],
      neverResolvedCount: 3,
    });
    const v1 = tracker.version;
    tracker.noteResolved('Orders');
    tracker.noteResolved('Orders');
    tracker.noteResolved('NotExpected');
    expect(tracker.version).toBe(v1 + 1);
    expect(tracker.snapshot().neverResolved).toEqual(['Legacy', 'Mailer']);
  });
});
