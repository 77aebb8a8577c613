/**
 * A method's uses for the ghost ledger (issue #43, the fleet half): `onMethodUse` hears a method's first call and its
 * first call after each re-arm, with the time the tracker keeps, so that the ledger knows each method's last use
 * (a method called all along is never `dormant` on the strength of its first call); `onMethodTouch` still hears the
 * first call only.
 */
import { GhostTracker } from '../../../../src/ghost/tracking/tracker';

class Orders {
  list(): string {
    return 'orders';
  }
  cancel(): boolean {
    return false;
  }
}

afterEach(() => jest.restoreAllMocks());

/** A later period: the tracker keeps a use only when it is later than the one it has. */
function nextPeriod(): number {
  const later = Date.now() + 60_000;
  jest.spyOn(Date, 'now').mockReturnValue(later);
  return later;
}

function watched(): { tracker: GhostTracker; orders: Orders; uses: string[]; firsts: string[] } {
  const tracker = new GhostTracker({ depth: 'method' });
  const uses: string[] = [];
  const firsts: string[] = [];
  tracker.onMethodUse((name, method, at) => {
    expect(typeof at).toBe('number');
    uses.push(`${name}#${method}`);
  });
  tracker.onMethodTouch((name, method) => firsts.push(`${name}#${method}`));
  const orders = new Orders();
  tracker.track('Orders', orders);
  return { tracker, orders, uses, firsts };
}

describe('a method’s uses', () => {
  it('are told at the first call and the first after each re-arm, per method', () => {
    const { tracker, orders, uses, firsts } = watched();
    orders.list();
    orders.list();
    orders.cancel();
    expect(uses).toEqual(['Orders#list', 'Orders#cancel']);
    const later = nextPeriod();
    tracker.rearm();
    orders.list();
    orders.list();
    expect(uses).toEqual(['Orders#list', 'Orders#cancel', 'Orders#list']);
    expect(firsts).toEqual(['Orders#list', 'Orders#cancel']);
    expect(tracker.methodsOf('Orders')!.get('list')).toBe(later);
  });

  it('stops telling a listener that unregistered, and a throwing listener never breaks the call', () => {
    const tracker = new GhostTracker({ depth: 'method' });
    const off = tracker.onMethodUse(() => {
      throw new Error('listener failed');
    });
    const orders = new Orders();
    tracker.track('Orders', orders);
    expect(orders.list()).toBe('orders');
    off();
    const heard: string[] = [];
    tracker.onMethodUse((_name, method) => heard.push(method));
    expect(orders.cancel()).toBe(false);
    expect(heard).toEqual(['cancel']);
  });

  // A class with a method never called stays watched: a re-arm of its touched bean used to keep the called
  // methods' first call on their new gates, so their next call was not told and the ledger read `dormant`.
  it('are told after a re-arm while another method of the class is still never called', () => {
    const { tracker, orders, uses } = watched();
    orders.list();
    nextPeriod();
    tracker.rearm();
    orders.list();
    expect(uses).toEqual(['Orders#list', 'Orders#list']);
  });
});
