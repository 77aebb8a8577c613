import type { GhostReport } from '../../../src/ghost/tracking/types';
import type { SketchInfo, SketchPlacement, SketchRegistryView } from '../../../src/sketch/types';
import type { ActuatorSources } from '../../../src/actuator';
import { ghostTrackingDisabled } from '../../../src/actuator';

/** A ghost report with `n` tracked beans, half of them touched. */
export function fakeGhostReport(n: number): GhostReport {
  const names = Array.from({ length: n }, (_, i) => `com.example.service.Bean${String(i).padStart(4, '0')}Service`);
  const touched = names.filter((_, i) => i % 2 === 0);
  const untouched = names.filter((_, i) => i % 2 === 1);
  return {
    disclaimer: 'Untouched means no tracked method was invoked during this run, not that the bean is unused.',
    trackedCount: n,
    touchedCount: touched.length,
    untouchedCount: untouched.length,
    touched,
    untouched,
    untrackableCount: 1,
    untrackable: { ConfigValue: 'no-methods' },
    frameworkSkipped: 12,
  };
}

export class FakeSketches implements SketchRegistryView {
  constructor(
    readonly items: SketchInfo[] = [],
    readonly placements: Record<string, SketchPlacement> = {},
  ) {}
  placement(id: string): SketchPlacement | undefined {
    return this.placements[id] ?? (this.get(id) ? { store: 'native' } : undefined);
  }
  list(): SketchInfo[] {
    return [...this.items].sort((a, b) => a.id.localeCompare(b.id));
  }
  get(id: string): SketchInfo | undefined {
    return this.items.find((s) => s.id === id);
  }
}

export const LIMIT: SketchInfo = { id: 'LIMIT_60000', epsilon: 0.0001, deltaPercent: 0.0335, memoryBytes: 1_048_576 };
export const SHIELD: SketchInfo = { id: 'SHIELD_1000', epsilon: 0.002, deltaPercent: 1.83, memoryBytes: 1_572_864 };

/** Sources backed by plain values, with call counters; `ghosts` undefined means Phase 2 off. */
export function fakeSources(
  init: {
    ghosts?: GhostReport;
    diag?: object;
    sketches?: SketchInfo[];
  } = {},
): ActuatorSources & { calls: Record<string, number>; state: typeof init } {
  const calls: Record<string, number> = { ghosts: 0, diagReport: 0, sketches: 0 };
  const state = { ...init };
  const registry = () => new FakeSketches(state.sketches ?? []);
  return {
    calls,
    state,
    ghosts() {
      calls.ghosts++;
      return state.ghosts ?? ghostTrackingDisabled();
    },
    diagReport() {
      calls.diagReport++;
      return state.diag;
    },
    sketches() {
      calls.sketches++;
      return registry();
    },
  };
}
