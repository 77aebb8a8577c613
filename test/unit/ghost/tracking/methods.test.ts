import { GhostTracker } from '../../../../src/ghost/tracking/tracker';

// Method depth (issue #43 §1): every method of a tracked bean's class chain has its own first touch.

function calledOf(tracker: GhostTracker, name: string): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const [k, at] of tracker.methodsOf(name) ?? []) out[k] = at !== undefined;
  return out;
}

describe('method depth', () => {
  it('takes each wrapper off at its own first call; the bean is touched at its first call of any', () => {
    class Orders {
      list(): string {
        return 'l';
      }
      cancel(id: number): number {
        return id;
      }
    }
    const list = Orders.prototype.list;
    const cancel = Orders.prototype.cancel;
    const tracker = new GhostTracker();
    const bean = new Orders();
    tracker.track('Orders', bean);
    expect(calledOf(tracker, 'Orders')).toEqual({ list: false, cancel: false });

    expect(bean.list()).toBe('l');
    expect(tracker.isTouched('Orders')).toBe(true);
    expect(Orders.prototype.list).toBe(list);
    // Not called yet: still watched.
    expect(Orders.prototype.cancel).not.toBe(cancel);
    expect(calledOf(tracker, 'Orders')).toEqual({ list: true, cancel: false });

    expect(bean.cancel(7)).toBe(7);
    expect(Orders.prototype.cancel).toBe(cancel);
    expect(calledOf(tracker, 'Orders')).toEqual({ list: true, cancel: true });
    expect(tracker.snapshot().methods).toEqual({ Orders: { cancel: expect.any(String), list: expect.any(String) } });
  });

  it('at bean depth, every wrapper goes at the first call and no method is reported', () => {
    class Svc {
      a(): number {
        return 1;
      }
      b(): number {
        return 2;
      }
    }
    const b = Svc.prototype.b;
    const tracker = new GhostTracker({ depth: 'bean' });
    const bean = new Svc();
    tracker.track('Svc', bean);
    bean.a();
    expect(Svc.prototype.b).toBe(b);
    expect(tracker.methodsOf('Svc')).toBeUndefined();
    expect(tracker.snapshot().methods).toBeUndefined();
  });

  it('sees a method called through a wrapper captured at start-up, bound, or through a Proxy of the bean', () => {
    class Handlers {
      route(): string {
        return 'r';
      }
      bound(): string {
        return 'b';
      }
      proxied(): string {
        return 'p';
      }
      never(): string {
        return 'n';
      }
    }
    const tracker = new GhostTracker();
    const bean = new Handlers();
    tracker.track('Handlers', bean);
    // What a router does at bootstrap: it keeps instance[method] and calls it later with the instance.
    const captured = bean.route;
    const bound = bean.bound.bind(bean);
    const proxy = new Proxy(bean, {});

    expect(captured.call(bean)).toBe('r');
    expect(bound()).toBe('b');
    expect(proxy.proxied()).toBe('p');
    expect(calledOf(tracker, 'Handlers')).toEqual({ route: true, bound: true, proxied: true, never: false });
    // The captured wrapper keeps forwarding after its method went back.
    expect(captured.call(bean)).toBe('r');
  });

  it('includes inherited methods and leaves out lifecycle hooks and the constructor', () => {
    class Base {
      shared(): number {
        return 1;
      }
      onModuleInit(): void {}
    }
    class Leaf extends Base {
      own(): number {
        return 2;
      }
    }
    const tracker = new GhostTracker();
    const bean = new Leaf();
    tracker.track('Leaf', bean);
    bean.onModuleInit();
    expect(tracker.isTouched('Leaf')).toBe(false);
    expect(calledOf(tracker, 'Leaf')).toEqual({ own: false, shared: false });
    expect(bean.shared()).toBe(1);
    expect(calledOf(tracker, 'Leaf')).toEqual({ own: false, shared: true });
    // The shadowing wrapper was taken off: the call reaches Base's method again.
    expect(Object.prototype.hasOwnProperty.call(Leaf.prototype, 'shared')).toBe(false);
  });

  it('a method called on an untracked instance of the class is in use; the bean is not touched by it', () => {
    class Mailer {
      send(): number {
        return 1;
      }
      other(): number {
        return 2;
      }
    }
    const tracker = new GhostTracker();
    tracker.track('Mailer', new Mailer());
    new Mailer().send();
    expect(tracker.isTouched('Mailer')).toBe(false);
    expect(calledOf(tracker, 'Mailer')).toEqual({ send: true, other: false });
  });

  it('two beans of one class: a method first called on one is called for both, the other still gets its bean touch', () => {
    class Repo {
      find(): number {
        return 1;
      }
      save(): number {
        return 2;
      }
    }
    const find = Repo.prototype.find;
    const save = Repo.prototype.save;
    const tracker = new GhostTracker();
    const a = new Repo();
    const b = new Repo();
    tracker.track('RepoA', a);
    tracker.track('RepoB', b);

    a.find();
    expect(tracker.isTouched('RepoA')).toBe(true);
    expect(calledOf(tracker, 'RepoB')).toEqual({ find: true, save: false });
    // RepoB is pending: find stays wrapped so that RepoB's first call of it is still seen.
    expect(Repo.prototype.find).not.toBe(find);
    b.find();
    expect(tracker.isTouched('RepoB')).toBe(true);
    expect(Repo.prototype.find).toBe(find);
    expect(Repo.prototype.save).not.toBe(save);
    b.save();
    expect(Repo.prototype.save).toBe(save);
    expect(calledOf(tracker, 'RepoA')).toEqual({ find: true, save: true });
  });

  it('an alias shares the methods already called on its object', () => {
    class Cfg {
      get1(): number {
        return 1;
      }
      get2(): number {
        return 2;
      }
    }
    const tracker = new GhostTracker();
    const bean = new Cfg();
    tracker.track('Cfg', bean);
    bean.get1();
    tracker.track('CFG_ALIAS', bean);
    expect(calledOf(tracker, 'CFG_ALIAS')).toEqual({ get1: true, get2: false });
    bean.get2();
    expect(calledOf(tracker, 'CFG_ALIAS')).toEqual({ get1: true, get2: true });
  });

  it('an application closing gives every method back, called or not, and keeps its list reported', () => {
    class Jobs {
      run(): number {
        return 1;
      }
      yearly(): number {
        return 2;
      }
    }
    const yearly = Jobs.prototype.yearly;
    const tracker = new GhostTracker();
    const owner = {};
    const bean = new Jobs();
    tracker.track('Jobs', bean, { owner });
    bean.run();
    expect(Jobs.prototype.yearly).not.toBe(yearly);
    tracker.end(owner);
    expect(Jobs.prototype.yearly).toBe(yearly);
    expect(calledOf(tracker, 'Jobs')).toEqual({ run: true, yearly: false });
    bean.yearly();
    expect(calledOf(tracker, 'Jobs')).toEqual({ run: true, yearly: false });
  });

  it('tells method listeners once per bean and method, inside the call', () => {
    class S {
      m(): number {
        return 1;
      }
    }
    const tracker = new GhostTracker();
    const seen: string[] = [];
    tracker.onMethodTouch((name, method) => seen.push(`${name}#${method}`));
    const bean = new S();
    tracker.track('S', bean);
    bean.m();
    bean.m();
    expect(seen).toEqual(['S#m']);
  });
});
