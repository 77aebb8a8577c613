/**
 * What a tech lead reads first on the page: the endpoints nobody calls, then the dead methods of each bean. The
 * inventory is diag-report.json's `endpoints`; their verdicts and the methods' come with the beans' verdicts
 * (the ledger answer's `endpoints` and `beans[].methods`, else the ghost report's `endpoints` and
 * `verdicts[].methods`). Without verdicts (Phase 2 off, or a report written before them) the page shows the
 * inventory alone and says what would judge it.
 */
import type { JudgedEndpoint, JudgedEntryPoints, JudgedMethod, PageData, SourceLine } from '../types';
import { el } from './dom';

/** Most likely dead first: the order of every verdict list on the page. */
export const VERDICT_ORDER = ['never-touched', 'insufficient-evidence', 'untrackable', 'retired', 'in-use'] as const;

export const VERDICT_LABELS: Record<string, string> = {
  'never-touched': 'never touched',
  dormant: 'dormant (not used lately)',
  'insufficient-evidence': 'not enough evidence yet',
  untrackable: 'untrackable',
  'in-use': 'in use',
  retired: 'retired',
};

/** Without verdicts, the inventory's first rows: the rest on request, so that the beans stay in sight. */
const INVENTORY_ROWS_SHOWN = 20;

type Endpoint = NonNullable<PageData['report']['endpoints']>[number];
type Select = (bean: string) => void;

/** The verdicts of methods and endpoints, from the ledger answer first, else from the ghost report. */
export function judgedEntryPoints(data: PageData): JudgedEntryPoints {
  const ledger = data.verdicts as unknown as JudgedEntryPoints | undefined;
  const ghosts = data.ghosts as unknown as
    { endpoints?: JudgedEntryPoints['endpoints']; verdicts?: JudgedEntryPoints['beans'] } | undefined;
  const withMethods = (beans: JudgedEntryPoints['beans']) => beans?.some((b) => Array.isArray(b.methods));
  const endpoints = ledger?.endpoints ?? ghosts?.endpoints;
  const beans = withMethods(ledger?.beans)
    ? ledger?.beans
    : withMethods(ghosts?.verdicts)
      ? ghosts?.verdicts
      : undefined;
  return { ...(endpoints ? { endpoints } : {}), ...(beans ? { beans } : {}) };
}

const rank = (verdict: string): number => {
  const i = (VERDICT_ORDER as readonly string[]).indexOf(verdict);
  return i < 0 ? VERDICT_ORDER.length : i;
};

function where(source: SourceLine | undefined): string {
  return source ? `${source.file}:${source.line}` : '';
}

function duration(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** A job's schedule in words: `0 0 1 1 *, next 2027-01-01T00:00:00.000Z`, `every 1 h`. */
function scheduleText(e: Endpoint): string {
  const s = e.schedule;
  if (!s) return '';
  const parts: string[] = [];
  if (s.cron !== undefined) parts.push(s.cron);
  if (s.everyMs !== undefined) parts.push(`every ${duration(s.everyMs)}`);
  if (s.nextAt !== undefined) parts.push(`next ${s.nextAt}`);
  return parts.join(', ');
}

function handlerCell(e: Endpoint, select: Select): HTMLTableCellElement {
  const td = el('td', { class: 'handler' });
  const button = el('button', { class: 'bean', type: 'button', 'data-endpoint-bean': e.bean }, e.bean);
  button.addEventListener('click', () => select(e.bean));
  td.append(button, document.createTextNode(`.${e.method}()`));
  return td;
}

function kindCounts(endpoints: readonly Endpoint[]): HTMLElement {
  const counts = new Map<string, number>();
  for (const e of endpoints) counts.set(e.kind, (counts.get(e.kind) ?? 0) + 1);
  const line = el('div', { class: 'counts' });
  for (const [kind, n] of counts) {
    const c = el('span', { class: 'count', 'data-kind-count': kind });
    c.append(el('b', {}, String(n)), document.createTextNode(kind));
    line.append(c);
  }
  return line;
}

/**
 * The endpoints, nobody-calls first: grouped by verdict when there are verdicts (in use folded away), else the
 * inventory as the report lists it. Undefined when the report has neither (a lazy container's).
 */
export function endpointsView(data: PageData, select: Select): HTMLElement | undefined {
  const judged = judgedEntryPoints(data).endpoints;
  const endpoints: readonly Endpoint[] | undefined = judged ?? data.report.endpoints;
  if (endpoints === undefined) return undefined;
  const section = el('section', { class: 'verdicts endpoints', id: 'endpoints', 'aria-label': 'endpoints' });
  if (judged === undefined) {
    section.append(el('h2', {}, `Endpoints: ${endpoints.length}`));
    section.append(
      el(
        'p',
        { class: 'evidence', id: 'endpoints-unjudged' },
        'The inventory of entry points, each with the method the framework calls. Which of them nobody calls ' +
          'is judged with Phase 2 (diag.ghost-tracking.enabled).',
      ),
    );
  } else {
    const never = judged.filter((e) => e.verdict === 'never-touched' && e.kept === undefined).length;
    section.append(el('h2', {}, `Endpoints nobody calls: ${never} of ${judged.length}`));
  }
  section.append(kindCounts(endpoints));
  const table = el('table', { class: 'verdict-table endpoint-table' });
  const head = el('tr');
  const columns = judged
    ? ['verdict', 'kind', 'route', 'handler', 'file', 'schedule']
    : ['kind', 'route', 'handler', 'schedule'];
  for (const h of columns) head.append(el('th', {}, h));
  const thead = el('thead');
  thead.append(head);
  table.append(thead);
  const body = el('tbody');
  const folded: HTMLTableRowElement[] = [];
  const rows = judged ? [...judged].sort((a, b) => rank(a.verdict) - rank(b.verdict)) : endpoints;
  for (const e of rows) {
    const verdict = (e as Partial<JudgedEndpoint>).verdict;
    const tr = el('tr', {
      'data-endpoint-route': e.route,
      'data-endpoint-kind': e.kind,
      ...(e.path !== undefined ? { 'data-endpoint-path': e.path } : {}),
    });
    if (verdict !== undefined) {
      const { kept, why } = e as Partial<JudgedEndpoint>;
      tr.classList.add(`v-${kept !== undefined ? 'kept' : verdict}`);
      tr.setAttribute('data-verdict', verdict);
      const cell = el('td', { class: 'verdict' }, kept !== undefined ? 'kept' : (VERDICT_LABELS[verdict] ?? verdict));
      const reason = kept ?? why;
      if (reason !== undefined) cell.title = reason;
      if (kept !== undefined) tr.setAttribute('data-kept', kept);
      tr.append(cell);
    }
    const route = el('td', { class: 'route' }, e.path !== undefined ? `${e.path} ${e.route}` : e.route);
    // Why it is kept, on the page and not only on hover: a reader must see why a route nobody calls stays.
    const keptWhy = verdict !== undefined ? (e as Partial<JudgedEndpoint>).kept : undefined;
    if (keptWhy !== undefined) route.append(el('div', { class: 'kept-reason' }, `kept: ${keptWhy}`));
    tr.append(el('td', { class: 'kind' }, e.kind), route, handlerCell(e, select));
    if (verdict !== undefined) tr.append(el('td', { class: 'file' }, where((e as JudgedEndpoint).source)));
    tr.append(el('td', { class: 'schedule' }, scheduleText(e)));
    // Folded: the endpoints in use, or, with no verdicts, the inventory past its first rows (Vendure has hundreds).
    if (verdict === 'in-use' || (verdict === undefined && body.childElementCount >= INVENTORY_ROWS_SHOWN)) {
      tr.classList.add('hidden');
      folded.push(tr);
    }
    body.append(tr);
  }
  table.append(body);
  section.append(table);
  if (folded.length > 0) {
    const more = el(
      'button',
      { type: 'button', class: 'more', id: 'show-endpoints' },
      judged ? `show the ${folded.length} endpoints in use` : `show the other ${folded.length} endpoints`,
    );
    more.addEventListener('click', () => {
      for (const tr of folded) tr.classList.remove('hidden');
      more.remove();
    });
    section.append(more);
  }
  return section;
}

/**
 * Each bean's methods nobody called, the beans with the most never-touched methods first; methods in use are
 * counted, not listed, and so are the handlers of endpoints, which the endpoints' view above lists by their route
 * (a route nobody calls is one finding, not two). Undefined when no bean carries method verdicts.
 */
export function deadMethodsView(data: PageData, select: Select): HTMLElement | undefined {
  const judged = judgedEntryPoints(data);
  const beans = judged.beans;
  if (beans === undefined) return undefined;
  const handlers = new Set((judged.endpoints ?? data.report.endpoints ?? []).map((e) => `${e.bean}\0${e.method}`));
  const section = el('section', { class: 'verdicts dead-methods', id: 'dead-methods', 'aria-label': 'dead methods' });
  let handled = 0;
  // A bean never touched as a whole is in the verdicts below: its methods would repeat it, as the gates leave them.
  // (one kept for a member is no finding: its other methods are listed, as the gates list them)
  const dead = beans
    .filter((b) => b.verdict !== 'never-touched' || b.kept !== undefined)
    .map((b) => ({
      bean: b,
      methods: (b.methods ?? []).filter((m) => {
        if (m.verdict === 'in-use') return false;
        if (!handlers.has(`${b.name}\0${m.name}`)) return true;
        handled++;
        return false;
      }),
    }))
    .filter((d) => d.methods.length > 0);
  // Kept on purpose, or inherited code another bean runs: shown with why, never counted as dead.
  const spokenFor = (m: JudgedMethod) => m.kept !== undefined || m.calledThrough !== undefined;
  const never = (methods: readonly JudgedMethod[]) =>
    methods.filter((m) => m.verdict === 'never-touched' && !spokenFor(m)).length;
  dead.sort(
    (a, b) =>
      never(b.methods) - never(a.methods) || (a.bean.name < b.bean.name ? -1 : a.bean.name > b.bean.name ? 1 : 0),
  );
  // Code several beans share (an inherited method at one line) counts once, as one finding of the gates.
  const sites = new Map<string, string[]>();
  let unlocated = 0;
  for (const d of dead)
    for (const m of d.methods) {
      if (m.verdict !== 'never-touched' || spokenFor(m)) continue;
      if (m.source === undefined) unlocated++;
      else {
        const site = `${m.source.file}:${m.source.line}#${m.name}`;
        sites.set(site, [...(sites.get(site) ?? []), d.bean.name]);
      }
    }
  const sharedWith = (bean: string, m: JudgedMethod) =>
    m.source === undefined
      ? []
      : (sites.get(`${m.source.file}:${m.source.line}#${m.name}`) ?? []).filter((b) => b !== bean);
  const total = sites.size + unlocated;
  const inBeans = dead.filter((d) => never(d.methods) > 0).length;
  // "0 never called" above a list of methods not judged yet read as "nothing dead" on a trial: the rest is counted.
  const waiting = dead.reduce(
    (n, d) => n + d.methods.filter((m) => m.verdict === 'insufficient-evidence' && !spokenFor(m)).length,
    0,
  );
  const heading = `Dead methods: ${total} never called, in ${inBeans} ${inBeans === 1 ? 'bean' : 'beans'}`;
  section.append(el('h2', {}, waiting > 0 ? `${heading}; ${waiting} not judged yet` : heading));
  if (handled > 0) {
    const them = handled === 1 ? 'handler is' : 'handlers are';
    section.append(el('p', { class: 'evidence' }, `${handled} endpoint ${them} listed with the endpoints above.`));
  }
  if (dead.length === 0) {
    section.append(el('p', { class: 'evidence' }, 'Every tracked method has been called.'));
    return section;
  }
  if (data.contractsNote !== undefined)
    section.append(el('p', { class: 'evidence contracts-note' }, data.contractsNote));
  const list = el('div', { class: 'dead-beans' });
  for (const { bean, methods } of dead) {
    const box = el('div', { class: 'dead-bean', 'data-dead-bean': bean.name });
    const title = el('h3');
    const button = el('button', { class: 'bean', type: 'button' }, bean.name);
    button.addEventListener('click', () => select(bean.name));
    title.append(button);
    // Counted by verdict: the handlers left to the endpoints above are not "in use" for being unlisted here.
    const inUse = (bean.methods ?? []).filter((m) => m.verdict === 'in-use').length;
    const cls = bean.className !== undefined && bean.className !== bean.name ? `class ${bean.className}` : undefined;
    const context = [cls, bean.module, bean.source, inUse > 0 ? `${inUse} in use` : undefined]
      .filter(Boolean)
      .join(' · ');
    if (context) title.append(el('span', { class: 'n' }, ` ${context}`));
    box.append(title);
    const ul = el('ul', { class: 'dead-method-list' });
    const order = (m: JudgedMethod) => (spokenFor(m) ? VERDICT_ORDER.length + 1 : rank(m.verdict));
    for (const m of [...methods].sort((a, b) => order(a) - order(b))) {
      const li = el('li', { class: `v-${m.verdict}`, 'data-method': m.name, 'data-verdict': m.verdict });
      const label =
        m.kept !== undefined
          ? `kept: ${m.kept}`
          : m.calledThrough !== undefined
            ? `not called here; its shared code runs through ${m.calledThrough.join(', ')}`
            : (VERDICT_LABELS[m.verdict] ?? m.verdict);
      if (spokenFor(m)) li.classList.replace(`v-${m.verdict}`, m.kept !== undefined ? 'v-kept' : 'v-shared');
      li.append(el('code', {}, `${m.name}()`), document.createTextNode(` ${label}`));
      if (m.source) li.append(el('span', { class: 'file' }, ` ${where(m.source)}`));
      const also = m.verdict === 'never-touched' && !spokenFor(m) ? sharedWith(bean.name, m) : [];
      if (also.length > 0)
        li.append(document.createTextNode(` · shared code, never called through ${also.join(', ')} either`));
      if (m.contract !== undefined && !spokenFor(m))
        li.append(el('span', { class: 'contract' }, contractText(m.contract)));
      ul.append(li);
    }
    box.append(ul);
    list.append(box);
  }
  section.append(list);
  return section;
}

/** What a method's contract means for deleting it, in the CLI's words (src/ghost/cli/members.ts, contractWords). */
function contractText(c: NonNullable<JudgedMethod['contract']>): string {
  const what = `${c.kind} ${c.name} (${c.file}:${c.line})`;
  const calledIn = c.calledIn ?? [];
  if (calledIn.length === 0) return ` · declared by ${what}: remove it there too`;
  const implement = calledIn.length === 1 ? 'implements' : 'implement';
  return ` · declared by ${what}, which ${calledIn.join(', ')} also ${implement}, called there: it stays while ${c.name} requires it`;
}
