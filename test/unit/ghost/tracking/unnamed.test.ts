import 'reflect-metadata';
import { GhostTracker } from '../../../../src/ghost/tracking/tracker';

// Beans tracked before their adapter can name them (NestJS: named after ready, on the analysis's read of the
// container, issue #46): what happens before the name is known must be told under it, exactly as if the bean had
// been named first.

function freshClass() {
  return class Orders {
    list(): string {
      return 'list';
    }
    archive(): string {
      return 'archive';
    }
  };
}

describe('beans tracked unnamed', () => {
  it('are not reported until named; calls before the name are told under it, with their methods', () => {
    const tracker = new GhostTracker();
    const Orders = freshClass();
    const used = new Orders();
    const idle = new Orders();
    const Other = freshClass();
    const never = new Other();
    const usedKey = {};
    const idleKey = {};
    const neverKey = {};
    const touches: string[] = [];
    const methods: string[] = [];
    tracker.onFirstTouch((name) => touches.push(name));
    tracker.onMethodTouch((name, method) => methods.push(`${name}.${method}`));
    tracker.trackUnnamed(usedKey, used);
    tracker.trackUnnamed(idleKey, idle);
    tracker.trackUnnamed(neverKey, never);
    expect(tracker.hasUnnamed()).toBe(true);
    // A call during bootstrap, before anything is named: the wrappers are in place.
    expect(used.list()).toBe('list');
    expect(touches).toEqual([]);
    expect(tracker.snapshot().trackedCount).toBe(0);

    const names = new Map<object, string>([
      [usedKey, 'OrdersA'],
      [idleKey, 'OrdersB'],
      [neverKey, 'Other'],
    ]);
    tracker.nameTracked((key) => ({ name: names.get(key)!, framework: false }));
    expect(tracker.hasUnnamed()).toBe(false);
    const report = tracker.snapshot();
    // Two instances of one class: a method called on one is called for both, only the receiver is touched.
    expect(report).toMatchObject({ touched: ['OrdersA'], untouched: ['OrdersB', 'Other'] });
    expect(report.methods).toEqual({
      OrdersA: { archive: null, list: expect.any(String) },
      OrdersB: { archive: null, list: expect.any(String) },
      Other: { archive: null, list: null },
    });
    expect(touches).toEqual(['OrdersA']);
    expect(methods.sort()).toEqual(['OrdersA.list', 'OrdersB.list']);

    // After the name, calls are told as for any bean.
    expect(never.archive()).toBe('archive');
    expect(tracker.isTouched('Other')).toBe(true);
    expect(touches).toEqual(['OrdersA', 'Other']);
  });

  it('a bean its name says a library registered gets its methods back and counts as a framework bean', () => {
    const tracker = new GhostTracker();
    const Lib = freshClass();
    const original = Lib.prototype.list;
    const bean = new Lib();
    const key = {};
    tracker.trackUnnamed(key, bean);
    expect(Lib.prototype.list).not.toBe(original);
    tracker.nameTracked(() => ({ name: 'LibModule/Lib', framework: true }));
    expect(Lib.prototype.list).toBe(original);
    expect(bean.list()).toBe('list');
    expect(tracker.snapshot()).toMatchObject({ trackedCount: 0, frameworkSkipped: 1, touched: [], untouched: [] });
  });

  it('says why a bean could not be tracked under the name it gets, and links a second key of one object', () => {
    const tracker = new GhostTracker();
    const Shared = freshClass();
    const shared = new Shared();
    const [first, second, frozen, scoped] = [{}, {}, {}, {}];
    tracker.trackUnnamed(first, shared);
    tracker.trackUnnamed(second, shared);
    tracker.trackUnnamed(frozen, Object.freeze(new (freshClass())()));
    tracker.trackUnnamed(scoped, new (freshClass())(), { scope: 'request' });
    const names = new Map<object, string>([
      [first, 'Shared'],
      [second, 'SHARED_ALIAS'],
      [frozen, 'Frozen'],
      [scoped, 'PerRequest'],
    ]);
    tracker.nameTracked((key) => ({ name: names.get(key)!, framework: false }));
    shared.list();
    expect(tracker.snapshot()).toMatchObject({
      touched: ['SHARED_ALIAS', 'Shared'],
      untrackable: { Frozen: 'final-class', PerRequest: 'non-singleton' },
    });
  });

  it('an owner names only its own beans: two applications starting at once', () => {
    const tracker = new GhostTracker();
    const [appA, appB] = [{}, {}];
    const [keyA, keyB] = [{}, {}];
    const beanA = new (freshClass())();
    const beanB = new (freshClass())();
    tracker.trackUnnamed(keyA, beanA, { owner: appA });
    tracker.trackUnnamed(keyB, beanB, { owner: appB });
    beanB.list();
    const asked: object[] = [];
    tracker.nameTracked((key) => (asked.push(key), { name: 'A', framework: false }), appA);
    expect(asked).toEqual([keyA]);
    expect(tracker.hasUnnamed(appA)).toBe(false);
    expect(tracker.hasUnnamed(appB)).toBe(true);
    tracker.nameTracked(() => ({ name: 'B', framework: false }), appB);
    expect(tracker.snapshot()).toMatchObject({ touched: ['B'], untouched: ['A'] });
  });

  it("a reader that comes before the adapter's naming has the beans named by the owner's namer first", () => {
    const tracker = new GhostTracker();
    const app = {};
    const key = {};
    const bean = new (freshClass())();
    let asked = 0;
    tracker.nameOnDemand(app, () => {
      asked += 1;
      tracker.nameTracked(() => ({ name: 'Early', framework: false }), app);
    });
    tracker.trackUnnamed(key, bean, { owner: app });
    bean.archive();
    // The process ends before the analysis after ready: its report must still name the bean.
    expect(tracker.snapshot()).toMatchObject({
      touched: ['Early'],
      methods: { Early: { archive: expect.any(String) } },
    });
    tracker.snapshot();
    expect(asked).toBe(1);
  });

  it('a name given to an object that waits for its own: linked once it has one, or at once by its namer', () => {
    const tracker = new GhostTracker();
    const bean = new (freshClass())();
    const key = {};
    tracker.trackUnnamed(key, bean);
    expect(tracker.track('VALUE_TOKEN', bean)).toMatchObject({ status: 'tracked', name: 'VALUE_TOKEN' });
    bean.list();
    tracker.nameTracked(() => ({ name: 'Orders', framework: false }));
    expect(tracker.snapshot()).toMatchObject({ touched: ['Orders', 'VALUE_TOKEN'], untrackable: {} });

    const named = new GhostTracker();
    const app = {};
    const other = new (freshClass())();
    named.nameOnDemand(app, () => named.nameTracked(() => ({ name: 'Other', framework: false }), app));
    named.trackUnnamed({}, other, { owner: app });
    expect(named.track('OTHER_TOKEN', other)).toMatchObject({ status: 'tracked', aliasOf: 'Other' });
  });

  it('needs names first when an exclude list must be matched before anything is wrapped', () => {
    expect(new GhostTracker().needsNamesFirst).toBe(false);
    expect(new GhostTracker({ exclude: ['LegacyService'] }).needsNamesFirst).toBe(true);
  });
});
