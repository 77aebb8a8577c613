import { bootRecord } from '../../shared/boot-clock';
import path from 'node:path';
import { CODE_ROOT } from '../../shared/package-root';
import { buildBootProfile } from './boot-profile';
import type { BootProfile, BootStep, StartupHook, StartupPhase, StartupSection } from './boot-types';
import type { StartupTimeline } from './startup-timeline';

export type { BootProfile, BootStep, PackageLoad, StartupSection } from './boot-types';

/**
 * The boot profile of this process now, from the raw record (src/shared/boot-clock.ts) and the container's
 * bean creations; built when read, never on the application's path. Cached once the process is ready and
 * nothing was recorded since.
 */
let cached: { key: string; profile: BootProfile } | undefined;

export function currentBootProfile(timeline?: StartupTimeline): BootProfile {
  const record = bootRecord();
  const key = `${record.loads.count}/${record.steps.count}/${record.marks.ready}/${timeline?.beans.length ?? -1}`;
  if (cached !== undefined && cached.key === key && !Number.isNaN(record.marks.ready)) return cached.profile;
  const origin = performance.timeOrigin;
  const nodeTiming = (performance as { nodeTiming?: { bootstrapComplete?: number; environment?: number } }).nodeTiming;
  const profile = buildBootProfile({
    ...record,
    timeOrigin: origin,
    ...(nodeTiming?.bootstrapComplete !== undefined ? { nodeBootstrapEnd: nodeTiming.bootstrapComplete } : {}),
    ...(nodeTiming?.environment !== undefined ? { nodeEnvironment: nodeTiming.environment } : {}),
    // A CommonJS main module, or the ES module Node was started with.
    ...(mainFile() !== undefined ? { mainFile: mainFile() } : {}),
    ownRoot: CODE_ROOT + path.sep,
    cachedFiles: Object.keys(require.cache),
    requirersOf: requirers(),
    beans: (timeline?.beans ?? []).map((b) => ({
      name: b.name,
      ...(b.module !== undefined ? { module: b.module } : {}),
      start: b.startTime - origin,
      end: b.endTime - origin,
      ...(b.returned !== undefined ? { returned: b.returned - origin } : {}),
    })),
    now: performance.now(),
  });
  cached = { key, profile };
  return profile;
}

/**
 * Who required each cached module, from `module.children` (every module that required it lists it), read when
 * first asked after ready and again only when modules were loaded since: a profile is rebuilt several times
 * after ready, and reading Vendure's 4,700 modules each time was half of a build (75 ms under a profiler).
 * (`module.parent` would say the first one only, and is deprecated.)
 */
let requirersRead: { modules: number; byChild: Map<string, string[]> } | undefined;

function requirers(): (file: string) => readonly string[] {
  let byChild: Map<string, string[]> | undefined;
  return (file) => {
    if (byChild === undefined) {
      const modules = Object.values(require.cache);
      if (requirersRead === undefined || requirersRead.modules !== modules.length) {
        const map = new Map<string, string[]>();
        for (const m of modules) {
          if (m === undefined) continue;
          for (const child of m.children ?? []) {
            const list = map.get(child.filename);
            if (list === undefined) map.set(child.filename, [m.filename]);
            else list.push(m.filename);
          }
        }
        requirersRead = { modules: modules.length, byChild: map };
      }
      byChild = requirersRead.byChild;
    }
    return byChild.get(file) ?? [];
  };
}

function mainFile(): string | undefined {
  if (require.main?.filename !== undefined) return require.main.filename;
  const entry = process.argv[1];
  return entry !== undefined ? path.resolve(entry) : undefined;
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

function phaseOf(s: BootStep): StartupPhase {
  return {
    name: s.name,
    startMs: round(s.start),
    endMs: round(s.end),
    selfMs: round(s.self),
    ...(s.critical ? { critical: true } : {}),
  };
}

function hookOf(s: BootStep): StartupHook {
  return {
    hook: s.name,
    bean: s.bean ?? '',
    ...(s.module ? { module: s.module } : {}),
    startMs: round(s.start),
    endMs: round(s.end),
    syncMs: round(s.end - s.start - (s.wait ?? 0)),
    waitMs: round(s.wait ?? 0),
    ...(s.critical ? { critical: true } : {}),
  };
}

const PHASE_KINDS = new Set(['node', 'preload', 'phase']);

/** The report's section: the profile without its per-file and per-bean steps (those are on `/startup`). */
export function startupSection(p: BootProfile): StartupSection {
  const phases = p.steps.filter(
    (s) =>
      PHASE_KINDS.has(s.kind) ||
      (s.kind === 'diag' && s.name !== 'diag.load' && s.name !== 'diag.patch') ||
      (s.kind === 'application' && s.parent === undefined),
  );
  return {
    processStart: new Date(p.timeOrigin).toISOString(),
    ...(p.ready !== undefined ? { readyMs: round(p.ready), readyCause: p.readyCause } : {}),
    coverage: {
      attributedMs: round(p.coverage.attributed),
      unattributedMs: round(p.coverage.unattributed),
      share: Math.round(p.coverage.share * 10000) / 10000,
    },
    phases: phases.map(phaseOf),
    packages: p.packages.map(({ inclusive, self, ...rest }) => ({
      ...rest,
      inclusiveMs: round(inclusive),
      selfMs: round(self),
    })),
    hooks: p.steps.filter((s) => s.kind === 'hook').map(hookOf),
    diag: {
      loadMs: round(p.diag.load),
      enableMs: round(p.diag.enable),
      patchMs: round(p.diag.patch),
      modulesMs: round(p.diag.modules),
      analysisMs: round(p.diag.analysis),
      totalMs: round(p.diag.total),
    },
    unattributed: p.coverage.gaps
      .filter((g) => g.end - g.start >= 0.05)
      .map((g) => ({
        startMs: round(g.start),
        endMs: round(g.end),
        ...(g.after ? { after: g.after } : {}),
        ...(g.before ? { before: g.before } : {}),
      })),
    ...(p.beforeInstrumentation ? { beforeInstrumentation: p.beforeInstrumentation } : {}),
    ...(p.shutdown
      ? {
          shutdown: {
            startMs: round(p.shutdown.start),
            endMs: round(p.shutdown.end),
            phases: p.shutdown.steps.filter((s) => s.kind === 'phase').map(phaseOf),
            hooks: p.shutdown.steps.filter((s) => s.kind === 'hook').map(hookOf),
          },
        }
      : {}),
  };
}
