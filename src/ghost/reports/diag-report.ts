import type { BeanGraph, EndpointRecord } from '../analysis/bean-graph';
import type { Phase1Result, OrphanVerdict } from '../analysis/candidates';
import type { StartupSection } from './boot-types';

export const DIAG_REPORT_FILE = 'diag-report.json';
export const GHOST_REPORT_FILE = 'diag-ghost-report.json';

/** One node of the report's graph. */
export interface ReportNode {
  name: string;
  token: string;
  module?: string;
  kind: string;
  scope: string;
  role: string;
  framework: boolean;
  eager: boolean;
  instantiationMs?: number;
  /** The class instantiated, when the bean is a class and its name differs from the token or is useful. */
  className?: string;
  /** Where the application class was loaded from (relative path), when known: for SARIF and the page. */
  source?: string;
  /** A ghost candidate's class declaration line in `source`, when found: where code scanning annotates it. */
  line?: number;
  /**
   * A bean with no class file of the application's (a library's class it registers, `providers: [Logger]`; a value
   * or factory provider): the file of the module registering it and the registration's line, where a finding points.
   */
  registeredIn?: { file: string; line?: number };
  /**
   * A library's (or Node's) class the application lists in its own providers: nothing of the application's to
   * delete but its registration. An application class whose file was not found has `registeredIn` but not this.
   */
  libraryClass?: true;
  /** Where the bean's module is declared, when two modules share its name. */
  moduleSource?: string;
  /** The shared library (outside the application's own source root) the class lives in. */
  sharedLibrary?: string;
  dependents: number;
  /** In a lazy container: whether the binding had been resolved when the application was ready. */
  resolved?: boolean;
  /** For application orphans: why they are or are not candidates. */
  verdict?: OrphanVerdict['status'];
  /** Why a candidate is one, when a rule beyond "nothing injects it" says so (`unused-passport-strategy`). */
  candidateReason?: string;
  /** A candidate something injects, but only these candidates do: it leaves the list with any of them. */
  neededOnlyBy?: string[];
  entryPoints?: string[];
  classificationError?: string;
  /** A candidate looked up by token after start-up: how (`app.get`, `moduleRef.resolve`…) and when first. */
  lookedUp?: BeanLookup;
}

/** One bean looked up by token after start-up, the first time. */
export interface BeanLookup {
  /** `app.get`, `app.resolve`, `moduleRef.get` or `moduleRef.resolve` (an `app.select(…)` context is an app). */
  readonly via: string;
  /** ISO time of the first lookup. */
  readonly at: string;
}

/** One line per field a reader could take for what it is not (`orphans` is not a list of dead code). */
export const REPORT_LEGEND = {
  orphans:
    'Application beans nothing injects, before any rule: controllers, crons, guards and other entry points are ' +
    'here too. Not a list of dead code; ghostCandidates is.',
  ghostCandidates:
    'The orphans no rule explains (created at start-up, no entry point, not looked up since), and the beans only ' +
    'they inject (neededOnlyBy): LOW confidence, confirm with Phase 2 (diag-ghost-report.json) before deleting ' +
    'anything.',
  endpoints:
    'Every entry point the framework calls (HTTP routes as served, GraphQL fields, message patterns, WebSocket ' +
    'messages, event listeners, jobs, CQRS and queue handlers, command lines), each with its handler bean and ' +
    'method; `unserved` says why this process does not serve one (its transport is not here: no call could reach ' +
    'it, so its silence is no evidence). The inventory, not a verdict: which ones were never called is in ' +
    'diag-ghost-report.json.',
  'graph.nodes[].verdict':
    'Why an orphan is or is not a candidate: candidate, entry-point, not-instantiated, looked-up, ' +
    'classification-failed. A bean with dependents has none, unless only candidates depend on it (candidate).',
} as const;

/** `diag-report.json`: written once the container has created every static instance. */
export interface DiagReport {
  reportVersion: 1;
  /** What the fields a newcomer misreads mean ({@link REPORT_LEGEND}). */
  legend: typeof REPORT_LEGEND;
  generatedAt: string;
  /** Which dependency-injection framework: `nestjs`, `inversify`, `tsyringe` or `awilix`. */
  framework: string;
  /** The container and its version, e.g. `{ name: '@nestjs/core', version: '11.1.6' }`. */
  container: { name: string; version?: string };
  pid: number;
  summary: {
    beans: number;
    applicationBeans: number;
    frameworkBeans: number;
    edges: number;
    /** Wall time of the container's instance creation, when observed. */
    instantiationMs?: number;
    /** Time the Phase 1 analysis itself took. */
    analysisMs: number;
  };
  /** Application beans with 0 incoming edges, unfiltered by the candidate rules. */
  orphans: string[];
  ghostCandidates: Phase1Result['ghostCandidates'];
  /** The ten application beans slowest to create. */
  slowestBeans: Array<{ name: string; instantiationMs: number }>;
  /** Groups of beans that depend on each other in a cycle (forwardRef). */
  cycles: string[][];
  graph: {
    nodes: ReportNode[];
    edges: Array<{ from: string; to: string; kind: string }>;
  };
  /**
   * Every entry point the framework calls, tied to its handler bean and method, sorted by kind and route
   * (docs/reports.md, "Entry points"). Absent when the container's adapter cannot read them (the lazy containers).
   */
  endpoints?: EndpointRecord[];
  /**
   * Where the process's start went, from process start to ready (docs/startup.md): added when the process is
   * ready, so absent from the first write.
   */
  startup?: StartupSection;
}

export interface DiagReportInput {
  graph: BeanGraph;
  phase1: Phase1Result;
  framework: string;
  container: { name: string; version?: string };
  instantiationMs?: number;
  analysisMs: number;
  now?: Date;
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

/**
 * How a bean stands at its registration (`registeredIn`, no class file of its own), or undefined when it has a file:
 * `only` when the registration is all that goes (a library's class the application lists, a value, a factory),
 * `class-file-unknown` when its class was found nowhere (one no module exports, or a library's the origins could not
 * tell: not known to be either). The one rule the inventory, the ledger and the `check` gate read it by.
 */
export function registrationOf(node: ReportNode): Registration | undefined {
  if (node.source !== undefined || node.registeredIn === undefined) return undefined;
  return node.kind === 'class' && node.libraryClass !== true ? 'class-file-unknown' : 'only';
}

/** See {@link registrationOf}. */
export type Registration = 'only' | 'class-file-unknown';

export function buildDiagReport(input: DiagReportInput): DiagReport {
  const { graph, phase1 } = input;
  const beans = graph.beans();
  const nodes: ReportNode[] = beans.map((bean) => {
    const node: ReportNode = {
      name: bean.name,
      token: bean.token,
      ...(bean.module !== undefined ? { module: bean.module } : {}),
      kind: bean.kind,
      scope: bean.scope,
      role: bean.role,
      framework: bean.framework,
      eager: bean.eager,
      ...(bean.instantiationMs !== undefined ? { instantiationMs: round(bean.instantiationMs) } : {}),
      ...(bean.className !== undefined ? { className: bean.className } : {}),
      ...(bean.source !== undefined ? { source: bean.source } : {}),
      ...(bean.moduleSource !== undefined ? { moduleSource: bean.moduleSource } : {}),
      ...(bean.sharedLibrary !== undefined ? { sharedLibrary: bean.sharedLibrary } : {}),
      ...(bean.libraryClass === true ? { libraryClass: true as const } : {}),
      dependents: graph.inDegree(bean.id),
      ...(bean.resolved !== undefined ? { resolved: bean.resolved } : {}),
    };
    const verdict = phase1.verdicts.get(bean.name);
    if (verdict && !bean.framework) {
      node.verdict = verdict.status;
      if (verdict.status === 'entry-point') node.entryPoints = [...verdict.reasons];
      if (verdict.status === 'candidate' && verdict.reason !== undefined) node.candidateReason = verdict.reason;
      if (verdict.status === 'candidate' && verdict.neededOnlyBy !== undefined)
        node.neededOnlyBy = [...verdict.neededOnlyBy];
      if (verdict.status === 'classification-failed') node.classificationError = verdict.error;
    }
    return node;
  });
  const applicationBeans = beans.filter((b) => !b.framework);
  const slowestBeans = applicationBeans
    .filter((b) => b.instantiationMs !== undefined)
    .sort((a, b) => b.instantiationMs! - a.instantiationMs!)
    .slice(0, 10)
    .map((b) => ({ name: b.name, instantiationMs: round(b.instantiationMs!) }));
  return {
    reportVersion: 1,
    legend: REPORT_LEGEND,
    generatedAt: (input.now ?? new Date()).toISOString(),
    framework: input.framework,
    container: input.container,
    pid: process.pid,
    summary: {
      beans: beans.length,
      applicationBeans: applicationBeans.length,
      frameworkBeans: phase1.frameworkBeans,
      edges: graph.edges().length,
      ...(input.instantiationMs !== undefined ? { instantiationMs: round(input.instantiationMs) } : {}),
      analysisMs: round(input.analysisMs),
    },
    orphans: phase1.orphans,
    ghostCandidates: phase1.ghostCandidates,
    slowestBeans,
    cycles: graph.cycles(),
    graph: {
      nodes,
      edges: graph.edges().map((e) => ({ from: graph.bean(e.from).name, to: graph.bean(e.to).name, kind: e.kind })),
    },
    ...(graph.endpoints !== undefined ? { endpoints: [...graph.endpoints] } : {}),
  };
}

/**
 * The report with `lookups` applied: each candidate among them leaves `ghostCandidates` (counted in
 * `lookedUpExcluded`) and its node gets the verdict `looked-up` with how and when. Phase 1 cannot see a lookup
 * by token; the process can, when it happens. Returns `report` itself when no candidate was looked up.
 */
export function excludeLookedUp(report: DiagReport, lookups: ReadonlyMap<string, BeanLookup>): DiagReport {
  const candidates = report.ghostCandidates;
  const lookedUp = new Set(candidates.beans.filter((name) => lookups.has(name)));
  if (lookedUp.size === 0) return report;
  // A candidate needed only by candidates is used again once one of them is: it leaves with them, in chains.
  const left = new Set(lookedUp);
  const held = report.graph.nodes.filter((n) => n.neededOnlyBy !== undefined && candidates.beans.includes(n.name));
  for (let changed = true; changed;) {
    changed = false;
    for (const node of held) {
      if (left.has(node.name) || !node.neededOnlyBy!.some((name) => left.has(name))) continue;
      left.add(node.name);
      changed = true;
    }
  }
  return {
    ...report,
    ghostCandidates: {
      ...candidates,
      count: candidates.count - left.size,
      beans: candidates.beans.filter((name) => !left.has(name)),
      lookedUpExcluded: (candidates.lookedUpExcluded ?? 0) + left.size,
    },
    graph: {
      ...report.graph,
      nodes: report.graph.nodes.map((node) => {
        if (!left.has(node.name)) return node;
        const { candidateReason: _reason, neededOnlyBy: _by, verdict: _verdict, ...rest } = node;
        // Needed by a bean the application looked up: in use, as any injected bean (no Phase 1 verdict).
        return lookedUp.has(node.name) ? { ...rest, verdict: 'looked-up', lookedUp: lookups.get(node.name)! } : rest;
      }),
    },
  };
}
