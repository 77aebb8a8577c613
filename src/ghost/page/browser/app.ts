/**
 * The report page's script, bundled with cytoscape into one inline script (scripts/build-page.js). It reads
 * the report from the page's `<script type="application/json" id="diag-data">` block and builds everything
 * with DOM methods and textContent: bean names are arbitrary strings (`provide: '<img onerror=…>'` is a valid
 * token), so no data ever goes through HTML parsing.
 */
import cytoscape from 'cytoscape';
import type { PageData } from '../types';
import { bootWaterfall } from './boot-waterfall';
import { el } from './dom';
import { deadMethodsView, endpointsView, VERDICT_LABELS } from './entry-points';

type Category = 'dead' | 'candidate' | 'untouched' | 'touched' | 'untrackable' | 'framework' | 'application';

/** Colour and shape together, so the legend also reads without colour. */
const CATEGORIES: Record<Category, { label: string; colour: string; shape: cytoscape.Css.NodeShape; glyph: string }> = {
  dead: { label: 'ghost candidate and never called (most likely dead)', colour: '#7b241c', shape: 'star', glyph: '★' },
  candidate: { label: 'ghost candidate (Phase 1)', colour: '#c0392b', shape: 'diamond', glyph: '◆' },
  untouched: { label: 'untouched (Phase 2)', colour: '#e67e22', shape: 'triangle', glyph: '▲' },
  touched: { label: 'touched (Phase 2)', colour: '#27ae60', shape: 'ellipse', glyph: '●' },
  untrackable: { label: 'untrackable', colour: '#8e44ad', shape: 'rectangle', glyph: '■' },
  application: { label: 'application bean', colour: '#2e6db4', shape: 'hexagon', glyph: '⬢' },
  framework: { label: 'framework / library bean', colour: '#a6acaf', shape: 'round-rectangle', glyph: '▢' },
};

type Node = PageData['report']['graph']['nodes'][number];

function readData(): PageData {
  const block = document.getElementById('diag-data');
  if (!block?.textContent) throw new Error('no report data in the page');
  return JSON.parse(block.textContent) as PageData;
}

function main(): void {
  const data = readData();
  const { report, ghosts, startup } = data;
  const nodes = report.graph.nodes;
  const touched = new Set(ghosts?.touched ?? []);
  const untouched = new Set(ghosts?.untouched ?? []);
  const untrackable = ghosts?.untrackable ?? {};
  const candidates = new Set(report.ghostCandidates.beans);
  const verdictOf = new Map((data.verdicts?.beans ?? []).map((v) => [v.name, v]));
  const categoryOf = (n: Node): Category => {
    if (n.framework) return 'framework';
    if (candidates.has(n.name) && untouched.has(n.name)) return 'dead';
    if (candidates.has(n.name) && !touched.has(n.name)) return 'candidate';
    if (touched.has(n.name)) return 'touched';
    // Never called, but its verdict says no call could reach it (its endpoints not served): not drawn as untouched.
    if (untouched.has(n.name) && verdictOf.get(n.name)?.verdict === 'untrackable') return 'untrackable';
    if (untouched.has(n.name)) return 'untouched';
    if (Object.prototype.hasOwnProperty.call(untrackable, n.name)) return 'untrackable';
    return 'application';
  };
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const outgoing = new Map<string, string[]>();
  const incoming = new Map<string, string[]>();
  for (const e of report.graph.edges) {
    (outgoing.get(e.from) ?? outgoing.set(e.from, []).get(e.from)!).push(e.to);
    (incoming.get(e.to) ?? incoming.set(e.to, []).get(e.to)!).push(e.from);
  }

  // Header and counts.
  const header = el('header');
  header.append(el('h1', {}, 'diag-instrumentation report'));
  header.append(
    el(
      'div',
      { class: 'meta' },
      `${report.container.name}${report.container.version ? ` ${report.container.version}` : ''} · ` +
        `${data.live ? 'live' : 'written'} ${report.generatedAt} · pid ${report.pid}`,
    ),
  );
  const counts = el('div', { class: 'counts', id: 'counts' });
  const count = (key: string, value: number, label: string) => {
    const c = el('span', { class: 'count', 'data-count': key });
    c.append(el('b', {}, String(value)), document.createTextNode(label));
    counts.append(c);
  };
  count('beans', report.summary.beans, 'beans');
  count('application', report.summary.applicationBeans, 'application');
  count('framework', report.summary.frameworkBeans, 'framework');
  count('candidates', report.ghostCandidates.count, 'ghost candidates');
  if (ghosts) {
    count('tracked', ghosts.trackedCount, 'tracked');
    count('touched', ghosts.touchedCount, 'touched');
    // Counted where they are drawn: a bean never called whose verdict says no call could reach it is untrackable.
    const unreachable = ghosts.untouched.filter((name) => verdictOf.get(name)?.verdict === 'untrackable').length;
    count('untouched', ghosts.untouchedCount - unreachable, 'untouched');
    count('untrackable', ghosts.untrackableCount + unreachable, 'untrackable');
  }
  header.append(counts);
  const legend = el('div', { class: 'legend', role: 'list', 'aria-label': 'legend' });
  for (const [key, c] of Object.entries(CATEGORIES)) {
    const item = el('span', { role: 'listitem', class: `c-${key}` });
    item.append(el('span', { class: 'glyph', 'aria-hidden': 'true' }, c.glyph), document.createTextNode(c.label));
    legend.append(item);
  }

  // Side panel: search, framework toggle, beans grouped by module.
  const side = el('aside', { class: 'side' });
  const search = el('input', {
    type: 'search',
    id: 'search',
    placeholder: 'Search beans…',
    'aria-label': 'search beans',
  });
  const toggleLabel = el('label', { class: 'toggle' });
  const toggle = el('input', { type: 'checkbox', id: 'show-framework' });
  toggleLabel.append(toggle, document.createTextNode(' show framework beans'));
  const list = el('div', { id: 'modules' });
  side.append(search, toggleLabel, list);
  const buttons = new Map<string, HTMLButtonElement>();
  const modules = new Map<string, Node[]>();
  for (const n of nodes) {
    const key = n.module ?? '(no module)';
    (modules.get(key) ?? modules.set(key, []).get(key)!).push(n);
  }
  const groups: Array<{ details: HTMLDetailsElement; beans: Node[]; framework: boolean }> = [];
  for (const [module, beans] of [...modules].sort((a, b) => a[0].localeCompare(b[0]))) {
    const framework = beans.every((b) => b.framework);
    const details = el('details', { class: 'module' });
    if (!framework) details.open = true;
    const summary = el('summary', {}, module);
    summary.append(el('span', { class: 'n' }, ` (${beans.length})`));
    const ul = el('ul', { class: 'beans' });
    for (const bean of [...beans].sort((a, b) => a.name.localeCompare(b.name))) {
      const cat = categoryOf(bean);
      const li = el('li');
      const b = el('button', {
        class: `bean c-${cat}`,
        type: 'button',
        'data-bean': bean.name,
        title: CATEGORIES[cat].label,
      });
      b.append(el('span', { 'aria-hidden': 'true' }, `${CATEGORIES[cat].glyph} `), document.createTextNode(bean.name));
      b.addEventListener('click', () => select(bean.name));
      buttons.set(bean.name, b);
      li.append(b);
      ul.append(li);
    }
    details.append(summary, ul);
    list.append(details);
    groups.push({ details, beans, framework });
  }

  const graph = el('section', { id: 'graph', 'aria-label': 'dependency graph' });
  const detailsPanel = el('aside', { class: 'details', id: 'details', 'aria-live': 'polite' });
  detailsPanel.append(el('p', { class: 'placeholder' }, 'Click a bean to see its edges, creation time and verdict.'));
  const layout = el('main');
  layout.append(side, graph, detailsPanel);
  document.body.append(header);
  // At a glance, in this order: the endpoints nobody calls, the dead methods of each bean, then the beans.
  for (const view of [endpointsView(data, select), deadMethodsView(data, select)]) {
    if (view) document.body.append(view);
  }
  if (data.verdicts) document.body.append(verdictTable(data.verdicts, (name) => select(name)));
  // Below the verdicts, what this one process saw: say so, where the table above is the fleet's.
  if (data.verdicts?.provenance.source === 'redis') {
    document.body.append(
      el(
        'h2',
        { class: 'this-process' },
        `This process (pid ${report.pid}): its graph and its own run's Phase 2 state`,
      ),
    );
  }
  document.body.append(legend, layout);
  if (startup?.boot) {
    const application = (bean: string, module: string | undefined): boolean => {
      const node = byName.get(bean) ?? (module !== undefined ? byName.get(`${module}/${bean}`) : undefined);
      return node !== undefined && !node.framework;
    };
    document.body.append(bootWaterfall(startup, startup.boot, application));
  } else if (startup) document.body.append(waterfall(startup, categoryOf, byName));

  // The graph: beans and their edges, framework beans only on request so an application's own stay readable
  // (modules group the list beside it; as compound nodes they made force layouts unreadable). The graph is
  // rebuilt, not hidden, so the layout sees only what shows.
  const elementsFor = (withFramework: boolean): cytoscape.ElementDefinition[] => {
    const out: cytoscape.ElementDefinition[] = [];
    const shown = new Set<string>();
    for (const [module, beans] of modules) {
      const visible = beans.filter((b) => withFramework || !b.framework);
      if (visible.length === 0) continue;
      for (const n of visible) {
        const cat = categoryOf(n);
        shown.add(n.name);
        out.push({
          data: {
            id: `bean:${n.name}`,
            label: n.name,
            bean: n.name,
            module,
            colour: CATEGORIES[cat].colour,
            shape: CATEGORIES[cat].shape,
          },
        });
      }
    }
    report.graph.edges.forEach((e, i) => {
      if (shown.has(e.from) && shown.has(e.to))
        out.push({ data: { id: `edge:${i}`, source: `bean:${e.from}`, target: `bean:${e.to}`, kind: e.kind } });
    });
    return out;
  };
  const cy = cytoscape({
    container: graph,
    minZoom: 0.05,
    maxZoom: 4,
    style: [
      {
        selector: 'node[bean]',
        style: {
          'background-color': 'data(colour)',
          shape: 'data(shape)' as never,
          label: 'data(label)',
          'font-size': 11,
          width: 22,
          height: 22,
          'text-valign': 'bottom',
          'text-margin-y': 3,
        },
      },
      {
        selector: 'edge',
        style: {
          width: 1,
          'line-color': '#9aa5b1',
          'target-arrow-color': '#9aa5b1',
          'target-arrow-shape': 'triangle',
          'curve-style': 'bezier',
          'arrow-scale': 0.6,
        },
      },
      { selector: 'node.match', style: { 'border-width': 3, 'border-color': '#0b63ce' } },
      { selector: 'node:selected', style: { 'border-width': 4, 'border-color': '#111' } },
    ],
  });
  const applyFrameworkToggle = () => {
    cy.elements().remove();
    cy.add(elementsFor(toggle.checked));
    for (const g of groups) if (g.framework) g.details.classList.toggle('hidden', !toggle.checked);
    // cytoscape's own force-directed layout for what a reader can take in; a grid past that, so thousands of
    // beans stay responsive.
    const options =
      cy.nodes('[bean]').length <= 400
        ? {
            name: 'cose',
            animate: false,
            nodeDimensionsIncludeLabels: true,
            padding: 24,
            componentSpacing: 40,
            randomize: false,
          }
        : { name: 'grid', padding: 20, avoidOverlap: true };
    cy.layout(options as cytoscape.LayoutOptions).run();
  };
  toggle.addEventListener('change', applyFrameworkToggle);
  applyFrameworkToggle();
  cy.on('tap', 'node[bean]', (evt) => select(String(evt.target.data('bean'))));

  search.addEventListener('input', () => {
    const q = search.value.trim().toLowerCase();
    cy.nodes().removeClass('match');
    for (const [name, button] of buttons) {
      const hit = q === '' || name.toLowerCase().includes(q);
      button.parentElement!.classList.toggle('hidden', !hit);
      if (q !== '' && hit) cy.getElementById(`bean:${name}`).addClass('match');
    }
    for (const g of groups) {
      g.details.open = q === '' ? !g.framework : g.beans.some((b) => b.name.toLowerCase().includes(q));
    }
  });

  function select(name: string): void {
    const n = byName.get(name);
    if (!n) return;
    for (const b of buttons.values()) b.classList.remove('selected');
    buttons.get(name)?.classList.add('selected');
    cy.$(':selected').unselect();
    const node = cy.getElementById(`bean:${name}`);
    if (node.nonempty()) {
      node.select();
      cy.animate({ center: { eles: node }, duration: 150 });
    }
    detailsPanel.replaceChildren(beanDetails(n));
  }

  function beanDetails(n: Node): HTMLElement {
    const box = el('div', { class: 'details', id: 'bean-details' });
    const cat = categoryOf(n);
    box.append(el('h2', {}, n.name));
    const dl = el('dl');
    const row = (k: string, v: string | undefined) => {
      if (v === undefined || v === '') return;
      dl.append(el('dt', {}, k), el('dd', { 'data-field': k }, v));
    };
    const v = verdictOf.get(n.name);
    row(
      'verdict',
      v
        ? `${v.verdict}: ${v.why}${v.kept !== undefined ? `; kept: ${v.kept}` : ''}`
        : n.framework
          ? 'framework bean (not judged)'
          : undefined,
    );
    row('state', CATEGORIES[cat].label);
    row('Phase 1', n.verdict ?? (n.framework ? 'framework bean (not analysed)' : 'injected somewhere'));
    row(
      'Phase 2',
      !ghosts
        ? 'off'
        : touched.has(n.name)
          ? `touched${v?.lastTouched ? ` (first at ${v.lastTouched})` : ''}`
          : untouched.has(n.name)
            ? 'tracked, never called'
            : Object.prototype.hasOwnProperty.call(untrackable, n.name)
              ? `untrackable: ${(untrackable as Record<string, string>)[n.name]}`
              : n.framework
                ? 'framework bean (not tracked)'
                : 'not tracked',
    );
    row('entry points', n.entryPoints?.join(', '));
    row('module', n.module);
    row('class', n.className);
    row('source', n.source !== undefined && n.line !== undefined ? `${n.source}:${n.line}` : n.source);
    // No class file of the application's: where its module registers it is what a reader deletes (reports.md).
    const at = n.registeredIn;
    row(
      'registered at',
      at === undefined
        ? undefined
        : `${at.file}${at.line !== undefined ? `:${at.line}` : ''}` +
            (n.source !== undefined
              ? ''
              : n.kind === 'class' && n.libraryClass !== true
                ? ' (its class file was not found)'
                : // what would go, said only of a bean judged dead: an untrackable one is no invitation
                  v?.verdict === 'never-touched' && v.kept === undefined
                  ? ' (the registration is all there is to delete)'
                  : ' (no class file of its own: its registration is all of it)'),
    );
    row('kind', n.kind);
    row('scope', n.scope);
    row('role', n.role);
    row('created in', n.instantiationMs !== undefined ? `${n.instantiationMs} ms` : undefined);
    row('injected into', String(n.dependents));
    box.append(dl);
    const links = (title: string, names: string[] | undefined) => {
      box.append(el('h3', {}, `${title} (${names?.length ?? 0})`));
      const ul = el('ul', { class: 'beans' });
      for (const name of names ?? []) {
        const b = el('button', { class: 'bean', type: 'button' }, name);
        b.addEventListener('click', () => select(name));
        const li = el('li');
        li.append(b);
        ul.append(li);
      }
      box.append(ul);
    };
    links('depends on', outgoing.get(n.name));
    links('used by', incoming.get(n.name));
    return box;
  }
}

function ago(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/**
 * The first view: one verdict per application bean, most likely dead first, with module, file and why, under
 * the evidence it rests on (a tech lead decides what to delete from this table). In-use beans are folded away.
 */
function verdictTable(answer: NonNullable<PageData['verdicts']>, select: (name: string) => void): HTMLElement {
  const section = el('section', { class: 'verdicts', id: 'verdicts', 'aria-label': 'verdicts' });
  const p = answer.provenance;
  section.append(el('h2', {}, `Verdicts: ${answer.service}`));
  const n = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;
  const evidence =
    p.source === 'redis'
      ? `Ghost ledger at ${p.ledger ?? 'Redis'}, read ${answer.generatedAt}: observed since ${p.since ?? 'never'}, ` +
        `${n(p.processes, 'process', 'processes')} (${p.trackedProcesses} tracked), ${n(p.versions, 'version')}, ${p.processHours} process-hours of tracking; ` +
        `last write ${p.lastWriteAgoMs === null ? 'never' : `${ago(p.lastWriteAgoMs)} ago`} ` +
        `from ${n(p.liveProcesses, 'live process', 'live processes')}.`
      : p.ledger !== undefined
        ? // A replica writing to a ledger: this file is its own run; the service's verdicts are the ledger's.
          `This process's run: since ${p.since ?? 'start'}, ${p.processHours} process-hours of tracking. ` +
          `Its touches go to the ghost ledger at ${p.ledger}: the service's verdicts, every replica, restart and deploy, ` +
          'are live at {base}/diag/ledger on the actuator and from npx diag-instrumentation ledger.'
        : `This process only (no ghost ledger configured): since ${p.since ?? 'start'}, ${p.processHours} process-hours of tracking. ` +
          'Set diag.ghost-tracking.ledger.url to judge on every replica, restart and deploy.';
  section.append(el('p', { class: 'evidence', id: 'evidence' }, evidence));
  section.append(
    el(
      'p',
      { class: 'evidence' },
      `Judged by ${answer.thresholds.source === 'service' ? "the service's thresholds" : answer.thresholds.source === 'override' ? 'thresholds overridden by the reader' : 'these thresholds'}: ` +
        `a never-called bean becomes never-touched after ${answer.thresholds.minDays} days, ${answer.thresholds.minProcessHours} process-hours of tracking ` +
        `and ${Math.round((answer.thresholds.minTrackedShare ?? 1) * 100)}% of its processes tracked; a used one is dormant when not used within ${answer.thresholds.minDays} days.`,
    ),
  );
  if (p.silent) {
    section.append(
      el(
        'p',
        { class: 'warning', id: 'silent' },
        'This service has gone silent: no process has written recently. The verdicts are those of its code as last seen running (silent is not deleted).',
      ),
    );
  }
  if (p.reset) {
    section.append(
      el('p', { class: 'warning' }, `The ledger was found emptied at ${p.resetAt}; evidence starts over.`),
    );
  }
  const counts = el('div', { class: 'counts' });
  for (const [verdict, n] of Object.entries(answer.counts)) {
    const c = el('span', { class: `count v-${verdict}`, 'data-verdict-count': verdict });
    c.append(el('b', {}, String(n)), document.createTextNode(VERDICT_LABELS[verdict] ?? verdict));
    counts.append(c);
  }
  section.append(counts);
  const table = el('table', { class: 'verdict-table' });
  const head = el('tr');
  for (const h of ['verdict', 'bean', 'module', 'file', 'why']) head.append(el('th', {}, h));
  const thead = el('thead');
  thead.append(head);
  table.append(thead);
  const body = el('tbody');
  const inUse: HTMLTableRowElement[] = [];
  for (const b of answer.beans) {
    const tr = el('tr', { class: `v-${b.verdict}`, 'data-verdict': b.verdict });
    const star = b.verdict === 'never-touched' && b.ghostCandidate ? ' ★' : '';
    const keptMark = b.kept !== undefined ? ' · kept' : '';
    tr.append(el('td', { class: 'verdict' }, `${VERDICT_LABELS[b.verdict] ?? b.verdict}${star}${keptMark}`));
    const name = el('td');
    const button = el('button', { class: 'bean', type: 'button', 'data-verdict-bean': b.name }, b.name);
    button.addEventListener('click', () => select(b.name));
    name.append(button);
    const file = el('td', { class: 'file' }, b.source === undefined ? '' : `${b.source}${b.line ? `:${b.line}` : ''}`);
    // A bean with no class file of its own: the file is where its module registers it (ledger.md).
    if (b.registered)
      file.append(
        el(
          'div',
          { class: 'registered' },
          b.classFileUnknown
            ? 'registered here; its class file was not found'
            : b.verdict === 'never-touched' && b.kept === undefined
              ? 'registered here: the registration goes'
              : 'registered here',
        ),
      );
    tr.append(name, el('td', {}, b.module ?? ''), file);
    const why = el('td', { class: 'why' }, b.why);
    // Never called, but holding a kept member: it stays, and the page says why (the gates leave it out).
    if (b.kept !== undefined) {
      tr.classList.add('v-kept');
      why.append(el('div', { class: 'kept-reason' }, `kept: ${b.kept}`));
    }
    // Each verdict carries its own evidence (older answers had none).
    if (b.evidence) why.append(el('div', { class: 'bean-evidence' }, b.evidence));
    tr.append(why);
    if (b.verdict === 'in-use') {
      tr.classList.add('hidden');
      inUse.push(tr);
    }
    body.append(tr);
  }
  table.append(body);
  section.append(table);
  if (inUse.length > 0) {
    const more = el(
      'button',
      { type: 'button', class: 'more', id: 'show-in-use' },
      `show the ${inUse.length} beans in use`,
    );
    more.addEventListener('click', () => {
      for (const tr of inUse) tr.classList.remove('hidden');
      more.remove();
    });
    section.append(more);
  }
  return section;
}

/** Bean creation in start order: one bar per bean, at most 400 rows (the slowest first beyond that). */
function waterfall(
  t: NonNullable<PageData['startup']>,
  categoryOf: (n: Node) => Category,
  byName: Map<string, Node>,
): HTMLElement {
  const section = el('section', { class: 'waterfall', id: 'waterfall' });
  const total = Math.max(1, t.endTime - t.startTime);
  const beans = [...t.beans];
  const limit = 400;
  const shown =
    beans.length > limit
      ? [...beans].sort((a, b) => b.endTime - b.startTime - (a.endTime - a.startTime)).slice(0, limit)
      : beans;
  shown.sort((a, b) => a.startTime - b.startTime);
  section.append(
    el(
      'h2',
      {},
      `Start-up: ${beans.length} beans created in ${total.toFixed(1)} ms${beans.length > limit ? ` (the ${limit} slowest shown)` : ''}`,
    ),
  );
  for (const b of shown) {
    const node = byName.get(b.name);
    const row = el('div', { class: 'row' });
    const name = el(
      'span',
      { class: `name c-${node ? categoryOf(node) : 'application'}`, title: `${b.module ?? ''} ${b.name}` },
      b.name,
    );
    const track = el('span', { class: 'track' });
    const bar = el('span', { class: 'bar' });
    bar.style.left = `${(((b.startTime - t.startTime) / total) * 100).toFixed(3)}%`;
    bar.style.width = `${(((b.endTime - b.startTime) / total) * 100).toFixed(3)}%`;
    track.append(bar);
    row.append(name, track, el('span', { class: 'ms' }, `${(b.endTime - b.startTime).toFixed(2)} ms`));
    section.append(row);
  }
  return section;
}

try {
  main();
} catch (err) {
  document.body.textContent = `diag-instrumentation report page: ${(err as Error).message}`;
}
