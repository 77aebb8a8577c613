import type { SketchRedisSettings } from './settings';
import type { SketchRegistryView } from './types';

/*
 * What the instrumentation hands the process-wide sketch registry, kept apart from the registry itself so that
 * an application that never creates a sketch never loads the sketch code (start-up, issue #15).
 */

let settings: SketchRedisSettings | undefined;
let created: { view: SketchRegistryView; settingsChanged(settings: SketchRedisSettings): void } | undefined;

/**
 * Gives the process-wide registry the instrumentation's `diag.sketch.redis.*` settings (its options joined
 * with the environment). Before the registry exists they are kept for its creation; after, a URL that was
 * not in effect yet moves new sketches to the fleet store.
 */
export function configureSketchRegistry(next: SketchRedisSettings): void {
  settings = next;
  created?.settingsChanged(next);
}

/** The settings the instrumentation gave, if any. */
export function instrumentationSketchSettings(): SketchRedisSettings | undefined {
  return settings;
}

/** Called once by the registry module when it creates the process-wide registry. */
export function registryCreated(registry: {
  view: SketchRegistryView;
  settingsChanged(settings: SketchRedisSettings): void;
}): void {
  created = registry;
}

/** The process-wide registry if the application created one (a sketch exists or was asked for); never creates it. */
export function existingSketchRegistry(): SketchRegistryView | undefined {
  return created?.view;
}
