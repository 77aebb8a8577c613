import 'reflect-metadata';
import { GhostTracker } from '../../../../src/ghost/tracking/tracker';

// Issue #46 (names after ready): each case compares a bean tracked unnamed, then named, with the same bean
// tracked under its name first (the behaviour before #46, still the one with an exclude list). They must agree.

function freshClass() {
  return class Shared {
    list(): string {
      return 'list';
    }
  };
}

describe('beans tracked unnamed agree with beans named first', () => {
  it('one object in two applications, the second application named first', () => {
    // Named first: both applications' beans are tracked, the second linked to the first's handle.
    const named = new GhostTracker();
    const [a1, b1] = [{}, {}];
    const obj1 = new (freshClass())();
    named.track('ConfigA', obj1, { owner: a1 });
    named.track('ConfigB', obj1, { owner: b1 });
    obj1.list();
    expect(named.snapshot()).toMatchObject({ touched: ['ConfigA', 'ConfigB'], frameworkSkipped: 0 });

    // Unnamed: B's analysis (or its on-demand namer) runs before A's.
    const tracker = new GhostTracker();
    const [a2, b2] = [{}, {}];
    const [keyA, keyB] = [{}, {}];
    const obj2 = new (freshClass())();
    tracker.trackUnnamed(keyA, obj2, { owner: a2 });
    tracker.trackUnnamed(keyB, obj2, { owner: b2 });
    obj2.list();
    tracker.nameTracked(() => ({ name: 'ConfigB', framework: false }), b2);
    tracker.nameTracked(() => ({ name: 'ConfigA', framework: false }), a2);
    // Fails: ConfigB is counted as a framework bean (link() sees the Unnamed context) and never reported.
    expect(tracker.snapshot()).toMatchObject({ touched: ['ConfigA', 'ConfigB'], frameworkSkipped: 0 });
  });

  it("an application bean sharing the object of a library's bean wrapped at boot (origin unknown then)", () => {
    // Named first: the library's bean is never wrapped; the application's key tracks the object itself.
    const named = new GhostTracker();
    const obj1 = new (freshClass())();
    named.track('LibService', obj1, { framework: true });
    named.track('APP_CLIENT', obj1); // useFactory: (lib: LibService) => lib, or useValue of the same object
    expect(named.snapshot()).toMatchObject({ untouched: ['APP_CLIENT'], frameworkSkipped: 1 });

    const tracker = new GhostTracker();
    const [libKey, appKey] = [{}, {}];
    const obj2 = new (freshClass())();
    tracker.trackUnnamed(libKey, obj2); // framework: undefined, wrapped until its name says otherwise
    tracker.trackUnnamed(appKey, obj2); // linked to the library bean's handle
    const names = new Map<object, { name: string; framework: boolean }>([
      [libKey, { name: 'LibService', framework: true }],
      [appKey, { name: 'APP_CLIENT', framework: false }],
    ]);
    tracker.nameTracked((key) => names.get(key)!);
    // Fails: APP_CLIENT is counted as a second framework bean, untracked: the application's bean vanished.
    expect(tracker.snapshot()).toMatchObject({ untouched: ['APP_CLIENT'], frameworkSkipped: 1 });
  });

  it("a named track() of an object whose library bean was unwrapped at naming (the analysis's value providers)", () => {
    const tracker = new GhostTracker();
    const libKey = {};
    const obj = new (freshClass())();
    tracker.trackUnnamed(libKey, obj);
    obj.list(); // touched during bootstrap: the touch puts the object in `instances`
    tracker.nameTracked(() => ({ name: 'LibService', framework: true }));
    // The object stays in `instances` with its ended handle, whose context is still Unnamed.
    // Named first, track('LibService', obj, { framework: true }) never wraps it, and this is tracked.
    // Fails: reported as `framework` (link() sees the Unnamed context).
    expect(tracker.track('APP_VALUE', obj)).toMatchObject({ status: 'tracked' });
  });

  it('the version grows when a bean is tracked unnamed: a reader caching by version (the actuator) would miss it', () => {
    const tracker = new GhostTracker();
    const app = {};
    const names = new Map<object, string>();
    tracker.nameOnDemand(app, () => tracker.nameTracked((key) => ({ name: names.get(key)!, framework: false }), app));
    const [first, second] = [{}, {}];
    names.set(first, 'First').set(second, 'Second');
    tracker.trackUnnamed(first, new (freshClass())(), { owner: app });
    // The actuator reads the version, then the snapshot (which names First, growing the version), filed under it.
    tracker.snapshot();
    const cachedUnder = tracker.version;
    tracker.trackUnnamed(second, new (freshClass())(), { owner: app });
    // Fails: trackUnnamed leaves the version as it was, so a cached answer without Second is served again
    // (the snapshot, not read, would have named it).
    expect(tracker.version).not.toBe(cachedUnder);
    expect(tracker.snapshot().untouched).toEqual(['First', 'Second']);
  });
});
