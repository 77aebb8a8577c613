import * as fs from 'node:fs';
import * as path from 'node:path';
import { BeanGraph } from '../../../src/ghost/analysis/bean-graph';
import { findGhostCandidates } from '../../../src/ghost/analysis/candidates';
import { buildDiagReport, excludeLookedUp } from '../../../src/ghost/reports/diag-report';
import { writeJsonAtomic } from '../../../src/shared/atomic-file';
import { writeGhostReport } from '../../../src/ghost/reports/ghost-report-file';
import { GhostTracker } from '../../../src/ghost/tracking/tracker';
import { tempDir } from '../../support/temp';

const tmp = (): string => tempDir('unit');

/** An application singleton created at start-up, as the tests' beans are unless they say otherwise. */
const base = {
  module: 'M',
  kind: 'class',
  scope: 'singleton',
  role: 'provider',
  framework: false,
  eager: true,
} as const;

/** The report of `g` with Phase 1's rules and no entry point. */
function reportOf(g: BeanGraph) {
  return buildDiagReport({
    graph: g,
    phase1: findGhostCandidates(g, () => []),
    framework: 'nestjs',
    container: { name: 'test' },
    analysisMs: 1,
  });
}

describe('diag-report.json', () => {
  it('carries the SPEC fields, the graph, the slowest beans and the cycles', () => {
    const g = new BeanGraph();
    const a = g.addBean({ ...base, token: 'A', instantiationMs: 3 });
    const b = g.addBean({ ...base, token: 'B', instantiationMs: 9 });
    g.addEdge(a, b, 'constructor');
    const report = reportOf(g);
    expect(report.orphans).toEqual(['A']);
    // B is injected, but only by the candidate A.
    expect(report.ghostCandidates).toMatchObject({
      confidence: 'LOW',
      count: 2,
      beans: ['A', 'B'],
      entryPointsExcluded: 0,
      notInstantiatedExcluded: 0,
      neededOnlyByCandidates: 1,
    });
    expect(report.graph.nodes.find((n) => n.name === 'B')).toMatchObject({
      verdict: 'candidate',
      candidateReason: 'needed only by the candidate A',
      neededOnlyBy: ['A'],
    });
    expect(report.graph.edges).toEqual([{ from: 'A', to: 'B', kind: 'constructor' }]);
    expect(report.slowestBeans.map((s) => s.name)).toEqual(['B', 'A']);
    expect(report.graph.nodes.find((n) => n.name === 'A')).toMatchObject({ verdict: 'candidate', dependents: 0 });
  });

  it('a lookup of a candidate takes the candidates needed only by it off the list with it, in chains', () => {
    const g = new BeanGraph();
    const a = g.addBean({ ...base, token: 'A' });
    const b = g.addBean({ ...base, token: 'B' });
    const c = g.addBean({ ...base, token: 'C' });
    g.addBean({ ...base, token: 'Other' });
    g.addEdge(a, b, 'constructor');
    g.addEdge(b, c, 'constructor');
    const report = reportOf(g);
    expect(report.ghostCandidates.beans).toEqual(['A', 'B', 'C', 'Other']);
    const after = excludeLookedUp(report, new Map([['A', { via: 'moduleRef.get', at: '2026-11-28T00:00:00.000Z' }]]));
    const c2 = after.ghostCandidates;
    expect(c2.beans).toEqual(['Other']);
    expect([c2.count, c2.lookedUpExcluded]).toEqual([1, 3]);
    expect(report.orphans.length + (c2.neededOnlyByCandidates ?? 0)).toBe(
      c2.count +
        c2.entryPointsExcluded +
        c2.notInstantiatedExcluded +
        c2.classificationFailedExcluded +
        c2.lookedUpExcluded,
    );
    const node = (name: string) => after.graph.nodes.find((n) => n.name === name)!;
    expect(node('A')).toMatchObject({ verdict: 'looked-up', lookedUp: { via: 'moduleRef.get' } });
    for (const name of ['B', 'C']) {
      expect(node(name).verdict).toBeUndefined();
      expect(node(name).neededOnlyBy).toBeUndefined();
    }
  });

  it('says in the report itself what the fields a newcomer misreads mean, first among them orphans', () => {
    const report = buildDiagReport({
      graph: new BeanGraph(),
      phase1: findGhostCandidates(new BeanGraph(), () => []),
      framework: 'nestjs',
      container: { name: 'test' },
      analysisMs: 1,
    });
    expect(Object.keys(report).slice(0, 2)).toEqual(['reportVersion', 'legend']);
    expect(report.legend.orphans).toMatch(/entry points are here too\. Not a list of dead code/);
    expect(Object.keys(report.legend)).toEqual(['orphans', 'ghostCandidates', 'endpoints', 'graph.nodes[].verdict']);
    expect(report.legend.endpoints).toMatch(/The inventory, not a verdict/);
  });

  it("carries the adapter's inventory of endpoints as `endpoints`, and none when the adapter read none", () => {
    const build = (g: BeanGraph) =>
      buildDiagReport({
        graph: g,
        phase1: findGhostCandidates(g, () => []),
        framework: 'nestjs',
        container: { name: 'test' },
        analysisMs: 1,
      });
    const g = new BeanGraph();
    g.addBean({
      token: 'ItemsController',
      kind: 'class',
      scope: 'singleton',
      role: 'controller',
      framework: false,
      eager: true,
    });
    expect(build(g)).not.toHaveProperty('endpoints');
    g.endpoints = [
      { kind: 'http', route: 'GET /api/v1/items/:id', bean: 'ItemsController', method: 'findOne' },
      { kind: 'cron', route: 'yearly', bean: 'ItemsController', method: 'y', schedule: { cron: '0 0 1 1 *' } },
    ];
    expect(build(g).endpoints).toEqual(g.endpoints);
  });
});

describe('writeJsonAtomic', () => {
  it('creates missing directories and leaves no temporary file behind', () => {
    const dir = path.join(tmp(), 'x', 'y');
    writeJsonAtomic(path.join(dir, 'r.json'), { a: 1 });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'r.json'), 'utf8'))).toEqual({ a: 1 });
    expect(fs.readdirSync(dir)).toEqual(['r.json']);
  });

  it('throws (for the caller to turn into a warning) when the directory cannot exist, and cleans up', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'file'), '');
    expect(() => writeJsonAtomic(path.join(dir, 'file', 'r.json'), {})).toThrow(/ENOTDIR|EEXIST/);
  });
});

describe('diag-ghost-report.json shared by several processes', () => {
  const trackerWith = (touch: string[], names: string[]): GhostTracker => {
    const t = new GhostTracker();
    for (const name of names) {
      const bean = {
        call(): number {
          return 1;
        },
      };
      t.track(name, bean);
      if (touch.includes(name)) bean.call();
    }
    return t;
  };

  it('merges processes of the same run: touched anywhere is touched', () => {
    const file = path.join(tmp(), 'diag-ghost-report.json');
    writeGhostReport(file, trackerWith(['A'], ['A', 'B', 'C']).snapshot(), 'run-1');
    const merged = writeGhostReport(file, trackerWith(['B'], ['A', 'B', 'C']).snapshot(), 'run-1');
    expect(merged.touched).toEqual(['A', 'B']);
    expect(merged.untouched).toEqual(['C']);
    expect(merged.run.id).toBe('run-1');
  });

  it('replaces, never merges, a report of another run', () => {
    const file = path.join(tmp(), 'diag-ghost-report.json');
    writeGhostReport(file, trackerWith(['A'], ['A', 'B']).snapshot(), 'yesterday');
    const today = writeGhostReport(file, trackerWith([], ['A', 'B']).snapshot(), 'today');
    expect(today.touched).toEqual([]);
    expect(today.untouched).toEqual(['A', 'B']);
  });
});
