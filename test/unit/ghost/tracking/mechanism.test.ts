import 'reflect-metadata';
import { EventEmitter } from 'node:events';
import { GhostTracker } from '../../../../src/ghost/tracking/tracker';

// The behaviour user code sees on a tracked bean, before and after its first touch.

class Counter {
  #count = 0;
  readonly label = 'c';

  increment(by = 1): number {
    this.#bump(by);
    return this.#count;
  }

  #bump(by: number): void {
    this.#count += by;
  }

  static hasBrand(x: object): boolean {
    return #count in x;
  }
}

function tracked<T extends object>(
  instance: T,
  name = 'bean',
  tracker = new GhostTracker(),
): { bean: T; tracker: GhostTracker } {
  const outcome = tracker.track(name, instance);
  expect(outcome.status).toBe('tracked');
  return { bean: instance, tracker };
}

describe('identity', () => {
  it('keeps ===, instanceof, constructor, own keys and JSON before and after the first touch', () => {
    const original = new Counter();
    const keysBefore = Object.keys(original);
    const json = JSON.stringify(original);
    const { bean, tracker } = tracked(original);

    expect(bean).toBe(original);
    expect(bean instanceof Counter).toBe(true);
    expect(bean.constructor).toBe(Counter);
    expect(Object.keys(bean)).toEqual(keysBefore);
    expect(JSON.stringify(bean)).toBe(json);
    expect(tracker.isTouched('bean')).toBe(false);

    bean.increment();
    expect(Object.prototype.hasOwnProperty.call(bean, 'increment')).toBe(false);
    expect(tracker.isTouched('bean')).toBe(true);
    expect(bean instanceof Counter).toBe(true);
    expect(bean.constructor).toBe(Counter);
    expect(Object.keys(bean)).toEqual(keysBefore);
  });

  it('never changes the object: the wrappers sit on its class prototype until the first touch', () => {
    class Svc {
      k = 1;
      read(): number {
        return this.k;
      }
    }
    const original = Svc.prototype.read;
    const plain = new Svc();
    const { bean } = tracked(new Svc());
    expect(Reflect.ownKeys(bean)).toEqual(Reflect.ownKeys(plain));
    expect(Object.getPrototypeOf(bean)).toBe(Svc.prototype);
    expect(Svc.prototype.read).not.toBe(original);
    expect(Object.getOwnPropertyDescriptor(Svc.prototype, 'read')).toMatchObject({ enumerable: false, writable: true });
    bean.read();
    expect(Svc.prototype.read).toBe(original);
    expect(Reflect.ownKeys(bean)).toEqual(Reflect.ownKeys(plain));
  });

  it('an inherited method is wrapped on the class prototype and taken off it again', () => {
    class Base {
      hello(): string {
        return 'hi';
      }
    }
    class Svc extends Base {}
    const { bean, tracker } = tracked(new Svc());
    expect(Object.prototype.hasOwnProperty.call(Svc.prototype, 'hello')).toBe(true);
    expect(Base.prototype.hello.call(bean)).toBe('hi'); // the base's method is never changed
    expect(tracker.isTouched('bean')).toBe(false);
    expect(bean.hello()).toBe('hi');
    expect(tracker.isTouched('bean')).toBe(true);
    expect(Object.getOwnPropertyNames(Svc.prototype)).toEqual(['constructor']);
  });

  it('an untracked instance of the class touches nobody; an unbound call may touch any pending instance', () => {
    class Svc {
      ping(): string {
        return 'pong';
      }
    }
    const tracker = new GhostTracker();
    const a = new Svc();
    const b = new Svc();
    tracker.track('a', a);
    tracker.track('b', b);
    expect(new Svc().ping()).toBe('pong');
    expect(tracker.snapshot().touched).toEqual([]);
    const unbound = a.ping;
    expect(unbound()).toBe('pong');
    // Nothing names the instance: both count, since a used bean must never be called a ghost.
    expect(tracker.snapshot().touched).toEqual(['a', 'b']);
  });

  it('an object made with Object.create(bean) touches the bean it was made from', () => {
    class Strategy {
      authenticate(): string {
        return 'ok';
      }
    }
    const { bean, tracker } = tracked(new Strategy());
    const derived = Object.create(bean) as Strategy; // what passport does with a strategy on each request
    expect(derived.authenticate()).toBe('ok');
    expect(tracker.isTouched('bean')).toBe(true);
  });

  it('the first of two instances of one class calls the original directly while the other stays pending', () => {
    class Svc {
      ping(): string {
        return 'pong';
      }
    }
    const original = Svc.prototype.ping;
    const tracker = new GhostTracker();
    const used = new Svc();
    const ghost = new Svc();
    tracker.track('used', used);
    tracker.track('ghost', ghost);
    used.ping();
    expect(used.ping).toBe(original);
    expect(ghost.ping).not.toBe(original);
    expect(tracker.isTouched('ghost')).toBe(false);
    ghost.ping();
    expect(Svc.prototype.ping).toBe(original);
    expect(tracker.snapshot().touched).toEqual(['ghost', 'used']);
  });
});

describe('#private members', () => {
  it('reads and writes #private fields and calls #private methods through wrappers and after', () => {
    const { bean } = tracked(new Counter());
    expect(Counter.hasBrand(bean)).toBe(true);
    expect(bean.increment(2)).toBe(2); // first touch goes through a wrapper
    expect(bean.increment(3)).toBe(5); // plain call afterwards
    expect(Counter.hasBrand(bean)).toBe(true);
  });
});

describe('what counts as a touch', () => {
  it('a captured method reference touches on first call and keeps working afterwards', () => {
    class Fresh extends Counter {}
    const { bean, tracker } = tracked(new Fresh());
    const f = bean.increment; // what a router stores at bootstrap
    expect(tracker.isTouched('bean')).toBe(false);
    expect(f.call(bean, 4)).toBe(4);
    expect(tracker.isTouched('bean')).toBe(true);
    expect(f.call(bean, 1)).toBe(5);
    expect(f).not.toBe(bean.increment); // the captured wrapper survives, the bean itself is plain again
    expect(bean.increment(1)).toBe(6);
  });

  it('inherited methods are wrapped, super calls work, the override is the one called', () => {
    class Base {
      greet(): string {
        return 'base';
      }
      shared(): string {
        return 'shared';
      }
    }
    class Derived extends Base {
      override greet(): string {
        return `derived+${super.greet()}`;
      }
    }
    const a = tracked(new Derived(), 'a');
    expect(a.bean.shared()).toBe('shared');
    expect(a.tracker.isTouched('a')).toBe(true);
    expect(Object.getPrototypeOf(a.bean)).toBe(Derived.prototype);

    const b = tracked(new Derived(), 'b');
    expect(b.bean.greet()).toBe('derived+base');
    expect(b.tracker.isTouched('b')).toBe(true);
  });

  it('arrow-function fields are touches and the original function is put back', () => {
    class Handlers {
      calls = 0;
      onMessage = (x: number): number => {
        this.calls++;
        return x * 2;
      };
    }
    const instance = new Handlers();
    const original = instance.onMessage;
    const { bean, tracker } = tracked(instance);
    expect(bean.onMessage).not.toBe(original);
    expect(Object.getOwnPropertyDescriptor(bean, 'onMessage')?.enumerable).toBe(true);
    expect(bean.onMessage(21)).toBe(42);
    expect(tracker.isTouched('bean')).toBe(true);
    expect(bean.onMessage).toBe(original);
    expect(bean.calls).toBe(1);
  });

  it('methods of a plain object returned by a factory are touches', () => {
    const client = { url: 'x', send: (m: string): string => `sent ${m}` };
    const { bean, tracker } = tracked(client);
    expect(Object.getPrototypeOf(bean)).toBe(Object.prototype);
    expect(bean.send('a')).toBe('sent a');
    expect(tracker.isTouched('bean')).toBe(true);
  });

  it('getters and setters do not touch and keep working', () => {
    class WithAccessors {
      private value = 1;
      get current(): number {
        return this.value;
      }
      set current(v: number) {
        this.value = v;
      }
      method(): void {}
    }
    const { bean, tracker } = tracked(new WithAccessors());
    bean.current = 5;
    expect(bean.current).toBe(5);
    expect(tracker.isTouched('bean')).toBe(false);
  });

  it('lifecycle hooks alone leave a bean untouched; the list is a parameter', () => {
    class WithHooks {
      inits = 0;
      onModuleInit(): void {
        this.inits++;
      }
      onApplicationBootstrap(): void {}
      onModuleDestroy(): void {}
      beforeApplicationShutdown(): void {}
      onApplicationShutdown(): void {}
      work(): number {
        return this.inits;
      }
    }
    const { bean, tracker } = tracked(new WithHooks());
    bean.onModuleInit();
    bean.onApplicationBootstrap();
    bean.onModuleDestroy();
    bean.beforeApplicationShutdown();
    bean.onApplicationShutdown();
    expect(bean.inits).toBe(1);
    expect(tracker.isTouched('bean')).toBe(false);
    expect(bean.work()).toBe(1);
    expect(tracker.isTouched('bean')).toBe(true);

    const custom = new GhostTracker({ lifecycleHooks: ['work'] });
    const other = new WithHooks();
    custom.track('other', other);
    other.work();
    expect(custom.isTouched('other')).toBe(false);
    other.onModuleInit(); // no longer in the list, so a touch
    expect(custom.isTouched('other')).toBe(true);
  });

  it('Symbol-keyed methods, Object.prototype methods and the constructor do not touch', () => {
    class Bag {
      items = [1, 2];
      *[Symbol.iterator](): Generator<number> {
        yield* this.items;
      }
      method(): void {}
    }
    const { bean, tracker } = tracked(new Bag());
    expect([...bean]).toEqual([1, 2]);
    expect(bean.toString()).toBe('[object Object]');
    expect(Object.prototype.hasOwnProperty.call(bean, 'items')).toBe(true);
    // eslint-disable-next-line no-prototype-builtins -- the bean's own method, through the tracking
    expect(bean.hasOwnProperty('items')).toBe(true);
    expect(bean.constructor).toBe(Bag);
    expect(bean.valueOf()).toBe(bean);
    expect(tracker.isTouched('bean')).toBe(false);
  });

  it('a bean with only lifecycle hooks, accessors or symbol methods has nothing to wrap', () => {
    class OnlyHooks {
      onModuleInit(): void {}
      get x(): number {
        return 1;
      }
      [Symbol.iterator](): Iterator<number> {
        return [][Symbol.iterator]();
      }
    }
    const tracker = new GhostTracker();
    const instance = new OnlyHooks();
    expect(tracker.track('hooks', instance)).toEqual({ status: 'untrackable', name: 'hooks', reason: 'no-methods' });
    expect(Object.getPrototypeOf(instance)).toBe(OnlyHooks.prototype);
  });
});

describe('async, generator and async generator methods', () => {
  class Jobs {
    readonly stored = Promise.resolve('stored');
    async load(x: number): Promise<number> {
      // eslint-disable-next-line @typescript-eslint/await-thenable -- a real suspension, nothing awaited
      await null;
      return x + 1;
    }
    same(): Promise<string> {
      return this.stored;
    }
    *range(n: number): Generator<number> {
      for (let i = 0; i < n; i++) yield i;
    }
    async *stream(n: number): AsyncGenerator<number> {
      for (let i = 0; i < n; i++) yield i;
    }
  }

  it('returns exactly what the original returns', async () => {
    const { bean, tracker } = tracked(new Jobs(), 'jobs');
    const sameViaWrapper = bean.same;
    expect(sameViaWrapper.call(bean)).toBe(bean.stored); // promise identity through the wrapper
    expect(tracker.isTouched('jobs')).toBe(true);
    expect(sameViaWrapper.call(bean)).toBe(bean.stored); // and through the forwarding wrapper
  });

  it('async methods resolve through the wrapper and keep their function kind visible', async () => {
    const { bean } = tracked(new Jobs(), 'jobs');
    const load = bean.load;
    const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor;
    expect(typeof load).toBe('function');
    expect(load.constructor).toBe(AsyncFunction);
    expect(Object.prototype.toString.call(load)).toBe('[object AsyncFunction]');
    const p = load.call(bean, 1);
    expect(p).toBeInstanceOf(Promise);
    await expect(p).resolves.toBe(2);
    await expect(bean.load(2)).resolves.toBe(3);
  });

  it('generator and async generator methods iterate through the wrapper', async () => {
    const a = tracked(new Jobs(), 'gen');
    const range = a.bean.range;
    const GeneratorFunction = Object.getPrototypeOf(function* () {}).constructor;
    expect(range.constructor).toBe(GeneratorFunction);
    expect([...range.call(a.bean, 3)]).toEqual([0, 1, 2]);
    expect(a.tracker.isTouched('gen')).toBe(true);

    const b = tracked(new Jobs(), 'agen');
    const stream = b.bean.stream;
    const seen: number[] = [];
    for await (const v of stream.call(b.bean, 3)) seen.push(v);
    expect(seen).toEqual([0, 1, 2]);
    expect(b.tracker.isTouched('agen')).toBe(true);
  });
});

describe('subclasses of built-ins', () => {
  it('Map subclass: own methods touch, Map methods do not, internal slots work', () => {
    class Registry extends Map<string, number> {
      register(k: string): this {
        return this.set(k, this.size);
      }
    }
    const { bean, tracker } = tracked(new Registry(), 'registry');
    bean.set('a', 1);
    expect(bean.get('a')).toBe(1);
    expect(bean.size).toBe(1);
    expect(tracker.isTouched('registry')).toBe(false);
    expect(bean.register('b')).toBe(bean);
    expect(bean.get('b')).toBe(1);
    expect(tracker.isTouched('registry')).toBe(true);
    expect(Map.prototype.has.call(bean, 'b')).toBe(true);
  });

  it('Set subclass with its own method', () => {
    class Tags extends Set<string> {
      addAll(...t: string[]): number {
        t.forEach((x) => this.add(x));
        return this.size;
      }
    }
    const { bean, tracker } = tracked(new Tags(), 'tags');
    bean.add('x');
    expect(tracker.isTouched('tags')).toBe(false);
    expect(bean.addAll('y', 'z')).toBe(3);
    expect(tracker.isTouched('tags')).toBe(true);
    expect([...bean]).toEqual(['x', 'y', 'z']);
  });

  it('Map subclass without methods of its own is reported as no-methods, untouched', () => {
    class Plain extends Map<string, string> {}
    const tracker = new GhostTracker();
    const m = new Plain();
    expect(tracker.track('plain', m)).toMatchObject({ reason: 'no-methods' });
    expect(Object.getPrototypeOf(m)).toBe(Plain.prototype);
  });

  it('EventEmitter subclass: emit/on work and do not touch; own methods do', () => {
    class Bus extends EventEmitter {
      publish(v: number): boolean {
        return this.emit('v', v);
      }
    }
    const { bean, tracker } = tracked(new Bus(), 'bus');
    const got: number[] = [];
    bean.on('v', (v: number) => got.push(v));
    bean.emit('v', 1);
    expect(tracker.isTouched('bus')).toBe(false);
    expect(bean.publish(2)).toBe(true);
    expect(got).toEqual([1, 2]);
    expect(tracker.isTouched('bus')).toBe(true);
    expect(bean.listenerCount('v')).toBe(1);
  });
});

describe('functions stored as properties', () => {
  it('old-style constructor functions can still be called with new', () => {
    function Model(this: { v: number }, v: number): void {
      this.v = v;
    }
    const holder = {
      Model: Model as unknown as new (v: number) => { v: number },
      make(): number {
        return 1;
      },
    };
    const { bean, tracker } = tracked(holder);
    const m = new bean.Model(3);
    expect(m.v).toBe(3);
    expect(m instanceof (Model as unknown as Function)).toBe(true);
    expect(tracker.isTouched('bean')).toBe(true);
  });
});

describe('after tracking, the world changes', () => {
  it('a bean frozen after tracking still works on its first touch (the wrappers simply stay)', () => {
    const { bean, tracker } = tracked(new Counter());
    Object.freeze(bean);
    expect(bean.increment()).toBe(1);
    expect(bean.increment()).toBe(2);
    expect(tracker.isTouched('bean')).toBe(true);
    expect(bean instanceof Counter).toBe(true);
  });

  it('an own function reassigned before the first touch is not overwritten by the restore', () => {
    const client = { send: (): string => 'a' };
    const { bean } = tracked(client);
    const replacement = (): string => 'b';
    bean.send = replacement;
    expect(bean.send()).toBe('b');
    expect(bean.send).toBe(replacement);
  });

  it('a prototype method replaced before the first touch stays replaced; the other methods are restored', () => {
    class Mailer {
      send(): string {
        return 'sent';
      }
      queue(): string {
        return 'queued';
      }
    }
    const queue = Mailer.prototype.queue;
    const { bean, tracker } = tracked(new Mailer());
    const patched = function send(): string {
      return 'patched';
    };
    Mailer.prototype.send = patched; // a test double or a monkey patch, installed over our wrapper
    expect(bean.queue()).toBe('queued');
    expect(tracker.isTouched('bean')).toBe(true);
    expect(Mailer.prototype.send).toBe(patched);
    expect(Mailer.prototype.queue).toBe(queue);
    expect(bean.send()).toBe('patched');
  });

  it('a subclass and its base class tracked together are both restored, with the inherited wrapper taken off', () => {
    class Base {
      ping(): string {
        return 'pong';
      }
    }
    class Derived extends Base {
      own(): string {
        return 'own';
      }
    }
    const ping = Base.prototype.ping;
    const tracker = new GhostTracker();
    const base = new Base();
    const derived = new Derived();
    tracker.track('base', base);
    tracker.track('derived', derived);
    expect(Object.getOwnPropertyNames(Derived.prototype)).toContain('ping');
    expect(derived.ping()).toBe('pong');
    expect(Object.getOwnPropertyNames(Derived.prototype).sort()).toEqual(['constructor', 'own']);
    expect(tracker.isTouched('base')).toBe(false);
    expect(base.ping()).toBe('pong');
    expect(Base.prototype.ping).toBe(ping);
    expect(tracker.snapshot()).toMatchObject({ touched: ['base', 'derived'], untouched: [] });
  });
});
