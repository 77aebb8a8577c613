/**
 * Last use (issue #45): once per period the tracker re-arms the first-touch wrappers of the beans it saw touched,
 * so that a use in each period is seen, and between two re-arms a touched bean's calls are plain calls again.
 */
import { GhostTracker } from '../../../../src/ghost/tracking/tracker';

class Orders {
  list(): string {
    return 'orders';
  }
}
class Audit {
  write(): string {
    return 'written';
  }
}

function tracked(): { tracker: GhostTracker; uses: string[]; firsts: string[] } {
  const tracker = new GhostTracker();
  const uses: string[] = [];
  const firsts: string[] = [];
  tracker.onUse((name) => uses.push(name));
  tracker.onFirstTouch((name) => firsts.push(name));
  return { tracker, uses, firsts };
}

describe('re-arming touched beans', () => {
  it('a use after each re-arm is seen once; calls between re-arms are not', () => {
    const { tracker, uses, firsts } = tracked();
    const orders = new Orders();
    tracker.track('Orders', orders);
    expect(orders.list()).toBe('orders');
    orders.list();
    expect(uses).toEqual(['Orders']);
    // after the touch the class has its own method back: nothing on the call path
    expect(Object.prototype.hasOwnProperty.call(orders, 'list')).toBe(false);
    expect(Orders.prototype.list.name).toBe('list');

    tracker.rearm();
    orders.list();
    orders.list();
    tracker.rearm();
    expect(orders.list()).toBe('orders');
    expect(uses).toEqual(['Orders', 'Orders', 'Orders']);
    // the first touch is still the first, once
    expect(firsts).toEqual(['Orders']);
    expect(tracker.snapshot()).toMatchObject({ touched: ['Orders'], touchedCount: 1 });
  });

  it('re-arms only touched beans; an untouched one stays armed once, a period without a use says nothing', () => {
    const { tracker, uses } = tracked();
    const orders = new Orders();
    const audit = new Audit();
    tracker.track('Orders', orders);
    tracker.track('Audit', audit);
    orders.list();
    tracker.rearm();
    tracker.rearm(); // no use in between: still armed, nothing said
    expect(uses).toEqual(['Orders']);
    audit.write();
    orders.list();
    expect(uses).toEqual(['Orders', 'Audit', 'Orders']);
  });

  it('an alias is said used under each of its names', () => {
    const { tracker, uses } = tracked();
    const orders = new Orders();
    tracker.track('Orders', orders);
    tracker.track('OrdersAlias', orders);
    orders.list();
    tracker.rearm();
    orders.list();
    expect(uses.sort()).toEqual(['Orders', 'Orders', 'OrdersAlias', 'OrdersAlias']);
  });

  it('a closed application is re-armed no more, and its armed beans give their methods back', () => {
    const { tracker, uses } = tracked();
    const owner = {};
    const orders = new Orders();
    tracker.track('Orders', orders, { owner });
    orders.list();
    tracker.rearm();
    tracker.end(owner);
    expect(Orders.prototype.list.name).toBe('list');
    expect(Object.getOwnPropertyNames(orders)).toEqual([]);
    orders.list();
    tracker.rearm();
    orders.list();
    expect(uses).toEqual(['Orders']);
  });

  it('a bean whose wrappers cannot be put back is said used each period: never dormant on a watch that stopped', () => {
    const { tracker, uses } = tracked();
    class Frozen {
      run(): number {
        return 1;
      }
    }
    const bean = new Frozen();
    tracker.track('Frozen', bean);
    bean.run();
    Object.freeze(Frozen.prototype);
    tracker.rearm();
    tracker.rearm();
    expect(uses).toEqual(['Frozen', 'Frozen', 'Frozen']);
    expect(bean.run()).toBe(1);
  });

  it('re-arms on its own once per period when asked to, and stops', async () => {
    const tracker = new GhostTracker({ rearmEveryMs: 20 });
    const uses: string[] = [];
    tracker.onUse((name) => uses.push(name));
    const orders = new Orders();
    tracker.track('Orders', orders);
    orders.list();
    try {
      await new Promise((r) => setTimeout(r, 60));
      orders.list();
      expect(uses).toEqual(['Orders', 'Orders']);
    } finally {
      tracker.stopRearming();
    }
  });
});

describe('re-arming at method depth', () => {
  it("a method's time is its last use per period, not its first call", () => {
    jest.useFakeTimers({ now: Date.UTC(2026, 10, 1) });
    try {
      const tracker = new GhostTracker({ depth: 'method' });
      const orders = new Orders();
      tracker.track('Orders', orders);
      orders.list();
      const first = tracker.methodsOf('Orders')!.get('list')!;
      jest.setSystemTime(Date.UTC(2026, 10, 20));
      tracker.rearm();
      orders.list();
      const later = tracker.methodsOf('Orders')!.get('list')!;
      expect(later - first).toBe(19 * 86_400_000);
    } finally {
      jest.useRealTimers();
    }
  });
});
