import { BeanGraph, type BeanInput } from '../../../src/ghost/analysis/bean-graph';
import {
  GHOST_CANDIDATES_DISCLAIMER,
  LAZY_GHOST_CANDIDATES_DISCLAIMER,
  findGhostCandidates,
} from '../../../src/ghost/analysis/candidates';

const bean = (token: string, extra: Partial<BeanInput> = {}): BeanInput => ({
  token,
  module: 'AppModule',
  kind: 'class',
  scope: 'singleton',
  role: 'provider',
  framework: false,
  eager: true,
  ...extra,
});

describe('Phase 1 rules on synthetic graphs', () => {
  it('in a lazy container lists the application bindings never resolved that nothing live needs; entry points and framework never', () => {
    const g = new BeanGraph();
    const lazy = (token: string, resolved: boolean, extra: Partial<BeanInput> = {}) =>
      g.addBean(bean(token, { eager: false, scope: 'transient', resolved, ...extra }));
    const controller = lazy('OrdersController', false, { role: 'controller' });
    const service = lazy('OrdersService', false);
    const repository = lazy('OrdersRepository', false);
    const clock = lazy('Clock', true);
    const timeSource = lazy('TimeSource', false);
    const exporter = lazy('LegacyExporter', false, { scope: 'singleton' });
    const formatter = lazy('CsvFormatter', false);
    lazy('LibraryThing', false, { framework: true });
    // a controller resolved per request builds what it needs then, through others too: none of it is an orphan
    g.addEdge(controller, service, 'constructor');
    g.addEdge(service, repository, 'constructor');
    g.addEdge(clock, timeSource, 'constructor');
    // needed only by a binding nothing live needs: both never resolved, both candidates
    g.addEdge(exporter, formatter, 'constructor');
    const result = findGhostCandidates(g, (b) =>
      b.role === 'controller' ? ['routing-controllers @JsonController'] : [],
    );
    expect(result.ghostCandidates.beans).toEqual(['CsvFormatter', 'LegacyExporter']);
    expect(result.orphans).toEqual(['CsvFormatter', 'LegacyExporter', 'OrdersController']);
    expect(result.ghostCandidates.entryPointsExcluded).toBe(1);
    expect(result.ghostCandidates.disclaimer).toBe(LAZY_GHOST_CANDIDATES_DISCLAIMER);
    expect(result.verdicts.get('Clock')).toBeUndefined();
    expect(result.verdicts.get('OrdersRepository')).toBeUndefined();
  });

  it('keeps the eager disclaimer for a container that creates its singletons at start-up', () => {
    const g = new BeanGraph();
    g.addBean(bean('Ghost'));
    expect(findGhostCandidates(g, () => []).ghostCandidates.disclaimer).toBe(GHOST_CANDIDATES_DISCLAIMER);
  });

  it('lists an eager orphan without entry points, and nothing that is injected', () => {
    const g = new BeanGraph();
    const controller = g.addBean(bean('UsersController', { role: 'controller' }));
    const service = g.addBean(bean('UsersService'));
    g.addBean(bean('Ghost'));
    g.addEdge(controller, service, 'constructor');
    const result = findGhostCandidates(g, (b) => (b.role === 'controller' ? ['controller'] : []));
    expect(result.ghostCandidates.beans).toEqual(['Ghost']);
    expect(result.orphans).toEqual(['Ghost', 'UsersController']);
    expect(result.ghostCandidates.entryPointsExcluded).toBe(1);
  });

  it('counts a bean not created at startup in notInstantiatedExcluded, whatever its scope', () => {
    const g = new BeanGraph();
    g.addBean(bean('PerRequest', { scope: 'request', eager: false }));
    g.addBean(bean('Transient', { scope: 'transient', eager: true }));
    g.addBean(bean('LazyLoaded', { eager: false }));
    const result = findGhostCandidates(g, () => []);
    expect(result.ghostCandidates.count).toBe(0);
    expect(result.ghostCandidates.notInstantiatedExcluded).toBe(3);
  });

  it('excludes a bean whose classification throws, and says why', () => {
    const g = new BeanGraph();
    g.addBean(bean('Hostile'));
    g.addBean(bean('Ghost'));
    const result = findGhostCandidates(g, (b) => {
      if (b.token === 'Hostile') throw new Error('revoked proxy');
      return [];
    });
    expect(result.ghostCandidates.beans).toEqual(['Ghost']);
    expect(result.ghostCandidates.classificationFailedExcluded).toBe(1);
    expect(result.verdicts.get('Hostile')).toEqual({ status: 'classification-failed', error: 'revoked proxy' });
  });

  it('never lists or names framework beans, only counts them', () => {
    const g = new BeanGraph();
    g.addBean(bean('ModuleRef', { framework: true }));
    g.addBean(bean('SchedulerRegistry', { framework: true, module: 'ScheduleModule' }));
    const result = findGhostCandidates(g, () => []);
    expect(result.orphans).toEqual([]);
    expect(result.frameworkBeans).toBe(2);
  });

  it('treats every kind of edge as a use: property, factory inject and alias', () => {
    const g = new BeanGraph();
    const a = g.addBean(bean('A', { role: 'controller' }));
    const viaProperty = g.addBean(bean('ViaProperty'));
    const viaFactory = g.addBean(bean('ViaFactory'));
    const viaAlias = g.addBean(bean('ViaAlias'));
    g.addEdge(a, viaProperty, 'property');
    g.addEdge(a, viaFactory, 'factory-inject');
    g.addEdge(a, viaAlias, 'alias');
    const live = findGhostCandidates(g, (b) => (b.role === 'controller' ? ['controller'] : []));
    expect(live.ghostCandidates.beans).toEqual([]);
  });

  it('keeps the orphan arithmetic exact on a large random graph', () => {
    const g = new BeanGraph();
    let seed = 7;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2000; i++) {
      g.addBean(bean(`B${i}`, { eager: rand() > 0.1, framework: rand() < 0.1 }));
    }
    for (let i = 0; i < 3000; i++) g.addEdge(Math.floor(rand() * 2000), Math.floor(rand() * 2000), 'constructor');
    const r = findGhostCandidates(g, (b) => (Number(b.token.slice(1)) % 5 === 0 ? ['controller'] : []));
    const c = r.ghostCandidates;
    expect(r.orphans.length + (c.neededOnlyByCandidates ?? 0)).toBe(
      c.count + c.entryPointsExcluded + c.notInstantiatedExcluded + c.classificationFailedExcluded,
    );
    // A candidate is an orphan, or every bean injecting it is a candidate.
    const listed = new Set(c.beans);
    for (const name of c.beans) {
      const id = g.beans().find((b) => b.name === name)!.id;
      const by = g
        .edges()
        .filter((e) => e.to === id)
        .map((e) => g.bean(e.from).name);
      if (g.inDegree(id) > 0) expect(by.every((n) => listed.has(n))).toBe(true);
    }
  });

  it('lists a bean injected only by candidates, in chains, naming them; never one with another dependent or an entry point', () => {
    // DuplicateService (dead) -> ProductRepo -> PriceTable: dead through their dependents. AuditLog is needed by
    // the dead service and by a live controller; WebhookHandler only by the dead service, but the framework calls it.
    const g = new BeanGraph();
    const controller = g.addBean(bean('ProductsController', { role: 'controller' }));
    const dead = g.addBean(bean('DuplicateService'));
    const repo = g.addBean(bean('ProductRepo'));
    const prices = g.addBean(bean('PriceTable'));
    const audit = g.addBean(bean('AuditLog'));
    const hook = g.addBean(bean('WebhookHandler'));
    const lib = g.addBean(bean('LibraryClient', { framework: true }));
    const perRequest = g.addBean(bean('RequestContext', { scope: 'request', eager: false }));
    g.addEdge(dead, repo, 'constructor');
    g.addEdge(repo, prices, 'constructor');
    g.addEdge(dead, audit, 'constructor');
    g.addEdge(controller, audit, 'constructor');
    g.addEdge(dead, hook, 'property');
    g.addEdge(dead, lib, 'constructor');
    g.addEdge(dead, perRequest, 'constructor');
    const r = findGhostCandidates(g, (b) =>
      b.role === 'controller' ? ['controller'] : b.token === 'WebhookHandler' ? ['@OnEvent'] : [],
    );
    expect(r.ghostCandidates.beans).toEqual(['DuplicateService', 'PriceTable', 'ProductRepo']);
    expect(r.ghostCandidates.neededOnlyByCandidates).toBe(2);
    expect(r.orphans).toEqual(['DuplicateService', 'ProductsController']);
    expect(r.verdicts.get('ProductRepo')).toEqual({
      status: 'candidate',
      reason: 'needed only by the candidate DuplicateService',
      neededOnlyBy: ['DuplicateService'],
    });
    expect(r.verdicts.get('PriceTable')).toMatchObject({ neededOnlyBy: ['ProductRepo'] });
    for (const live of ['AuditLog', 'WebhookHandler', 'LibraryClient', 'RequestContext'])
      expect(r.verdicts.get(live)).toBeUndefined();
  });
});

describe('BeanGraph', () => {
  it('names beans by token and qualifies clashes by module, then by number', () => {
    const g = new BeanGraph();
    g.addBean(bean('Helper', { module: 'UsersModule' }));
    g.addBean(bean('Helper', { module: 'BillingModule' }));
    g.addBean(bean('Helper', { module: 'BillingModule' }));
    g.addBean(bean('Unique'));
    expect(g.beans().map((b) => b.name)).toEqual([
      'UsersModule/Helper',
      'BillingModule/Helper',
      'BillingModule/Helper#2',
      'Unique',
    ]);
  });

  it('counts distinct dependents, not repeated injections', () => {
    const g = new BeanGraph();
    const a = g.addBean(bean('A'));
    const b = g.addBean(bean('B'));
    g.addEdge(a, b, 'constructor');
    g.addEdge(a, b, 'property');
    expect(g.inDegree(b)).toBe(1);
    expect(g.edges()).toHaveLength(2);
  });

  it('finds forwardRef cycles and self-loops, and survives a 100k-deep chain', () => {
    const g = new BeanGraph();
    const a = g.addBean(bean('A'));
    const b = g.addBean(bean('B'));
    const c = g.addBean(bean('C'));
    g.addEdge(a, b, 'constructor');
    g.addEdge(b, a, 'constructor');
    g.addEdge(c, c, 'property');
    expect(g.cycles()).toEqual([['A', 'B'], ['C']]);

    const deep = new BeanGraph();
    let prev = deep.addBean(bean('N0'));
    for (let i = 1; i < 100_000; i++) {
      const next = deep.addBean(bean(`N${i}`));
      deep.addEdge(prev, next, 'constructor');
      prev = next;
    }
    expect(deep.cycles()).toEqual([]);
  });

  it('rejects an edge to a bean that does not exist', () => {
    const g = new BeanGraph();
    g.addBean(bean('A'));
    expect(() => g.addEdge(0, 5, 'constructor')).toThrow(RangeError);
  });
});
