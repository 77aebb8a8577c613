/**
 * The page's start-up waterfall (docs/startup.md): the process from its start to ready, on one scale. First the
 * beans and lifecycle hooks that took time, the application's and the framework's (the rest on request); then the
 * phases, the critical path marked; then the packages, grouped under the ones the application loads itself.
 * Everything is built with DOM methods and textContent: bean and package names are data, never markup.
 */
import type { BootProfile, BootStep } from '../../reports/boot-types';
import type { PageData } from '../types';
import { el } from './dom';

type Startup = NonNullable<PageData['startup']>;

const ms = (value: number): string => (value >= 100 ? value.toFixed(0) : value.toFixed(1));

/** The shortest creation or hook shown without the box ticked: the application's, and the framework's. */
const OWN_MS = 0.5;
const FRAMEWORK_MS = 5;

/** At most this many rows per block, the longest first beyond it (thousands of loads stay readable). */
const ROW_LIMIT = 300;

/** One row: a name, a bar on the process's scale (its wait hatched), the figure. */
function row(
  scale: number,
  label: string,
  title: string,
  start: number,
  end: number,
  options: { wait?: number; critical?: boolean; kind: string; figure?: string; framework?: boolean; detail?: boolean },
): HTMLElement {
  const r = el('div', {
    class:
      `row boot-row k-${options.kind}${options.critical ? ' critical' : ''}` +
      `${options.framework ? ' framework' : ''}${options.detail ? ' detail hidden' : ''}`,
    'data-kind': options.kind,
  });
  const name = el('span', { class: 'name', title }, `${options.critical ? '◆ ' : ''}${label}`);
  const track = el('span', { class: 'track' });
  const pct = (x: number): string => `${((Math.max(0, x) / scale) * 100).toFixed(3)}%`;
  const wait = options.wait ?? 0;
  const work = el('span', { class: 'bar' });
  work.style.left = pct(start);
  work.style.width = pct(end - start - wait);
  track.append(work);
  if (wait > 0) {
    const waiting = el('span', { class: 'bar wait', title: `awaiting ${ms(wait)} ms` });
    waiting.style.left = pct(end - wait);
    waiting.style.width = pct(wait);
    track.append(waiting);
  }
  r.append(name, track, el('span', { class: 'ms' }, options.figure ?? `${ms(end - start)} ms`));
  return r;
}

function block(title: string, note?: string): HTMLElement {
  const b = el('div', { class: 'boot-block' });
  b.append(el('h3', {}, title));
  if (note) b.append(el('p', { class: 'note' }, note));
  return b;
}

const PHASE_KINDS = new Set(['node', 'preload', 'phase', 'diag']);

/**
 * The waterfall: `isApplication(bean, module)` tells the application's beans from the framework's (the report's
 * own verdict).
 */
export function bootWaterfall(
  startup: Startup,
  boot: BootProfile,
  isApplication: (bean: string, module: string | undefined) => boolean,
): HTMLElement {
  const section = el('section', { class: 'waterfall boot', id: 'waterfall' });
  const scale = Math.max(1, boot.end);
  const share = (boot.coverage.share * 100).toFixed(1);
  section.append(
    el(
      'h2',
      {},
      `Start-up: ${boot.ready !== undefined ? `ready in ${ms(boot.ready)} ms (${boot.readyCause})` : `${ms(boot.end)} ms so far`}` +
        ` · ${share} % on the timeline · diag-instrumentation's own ${ms(boot.diag.total)} ms`,
    ),
  );
  const toggleLabel = el('label', { class: 'toggle' });
  const toggle = el('input', { type: 'checkbox', id: 'boot-all-rows' });
  toggleLabel.append(toggle, document.createTextNode(' show every bean and hook of the start-up'));
  toggle.addEventListener('change', () => {
    section.querySelectorAll('.boot-row.detail').forEach((r) => r.classList.toggle('hidden', !toggle.checked));
  });
  section.append(toggleLabel);

  // 1. The beans and hooks that took time, in start order: the application's own from OWN_MS, the framework's
  //    (a TypeORM DataSource, a GraphQL schema) from FRAMEWORK_MS, and any on the critical path. On a real
  //    application most creations take no measurable time (47 of brocoders/nestjs-boilerplate's 0.0 ms rows led
  //    the view before its 66 ms DataSource): those wait behind the box.
  const own = block(
    'Beans and lifecycle hooks',
    'Your beans from 0.5 ms, the framework’s from 5 ms (theirs in grey); hatched: awaited. The box above shows every one.',
  );
  const origin = boot.timeOrigin;
  const rows: Array<{ start: number; weight: number; make: () => HTMLElement }> = [];
  for (const b of startup.beans) {
    const start = b.startTime - origin;
    const end = b.endTime - origin;
    const wait = b.returned !== undefined ? b.endTime - b.returned : 0;
    const framework = !isApplication(b.name, b.module);
    rows.push({
      start,
      weight: end - start,
      make: () =>
        row(scale, b.name, `${b.module ?? ''} ${b.name}: created`, start, end, {
          kind: 'bean',
          ...(wait > 0 ? { wait } : {}),
          framework,
          detail: end - start < (framework ? FRAMEWORK_MS : OWN_MS),
        }),
    });
  }
  for (const h of boot.steps.filter((s) => s.kind === 'hook')) {
    const framework = !isApplication(h.bean ?? '', h.module);
    rows.push({
      start: h.start,
      weight: h.critical ? Infinity : h.end - h.start,
      make: () =>
        row(scale, `${h.bean} · ${h.name}`, `${h.module ?? ''} ${h.bean}.${h.name}()`, h.start, h.end, {
          kind: 'hook',
          ...(h.wait !== undefined ? { wait: h.wait } : {}),
          ...(h.critical ? { critical: true } : {}),
          framework,
          detail: !h.critical && h.end - h.start < (framework ? FRAMEWORK_MS : OWN_MS),
        }),
    });
  }
  // Beyond the limit, the critical and the longest are kept; shown in start order.
  const kept =
    rows.length > ROW_LIMIT * 2 ? [...rows].sort((a, b) => b.weight - a.weight).slice(0, ROW_LIMIT * 2) : rows;
  kept.sort((a, b) => a.start - b.start);
  for (const r of kept) own.append(r.make());
  section.append(own);

  // 2. The phases, the critical path marked.
  const phases = block('Phases', '◆ on the critical path: what the start waited for.');
  const isPhase = (x: BootStep): boolean =>
    (PHASE_KINDS.has(x.kind) && x.name !== 'diag.load' && x.name !== 'diag.patch') ||
    (x.kind === 'application' && x.parent === undefined);
  for (const s of boot.steps.filter(isPhase)) {
    phases.append(
      row(scale, s.name, `${s.name}: ${ms(s.self)} ms of its own`, s.start, s.end, {
        kind: s.kind,
        ...(s.critical ? { critical: true } : {}),
        figure: `${ms(s.end - s.start)} ms`,
      }),
    );
  }
  section.append(phases);

  // 3. Packages: the ones the application (or a preload) loads itself, each with what it loaded inside.
  const packages = block(
    'Packages',
    'Grouped by package: inclusive (with what it loads) / self time, over every load of it. Open one for the packages it loaded.',
  );
  const byId = new Map(boot.steps.map((s) => [s.id, s]));
  const topPackageOf = (s: BootStep): string | undefined => {
    let top: string | undefined;
    for (let p: BootStep | undefined = s; p !== undefined; p = p.parent !== undefined ? byId.get(p.parent) : undefined)
      if (p.kind === 'package') top = p.package;
    return top;
  };
  const nested = new Map<string, Map<string, number>>();
  // Each package's outermost package where it first loaded (itself when the application loaded it).
  const outermostOf = new Map<string, string>();
  for (const s of boot.steps) {
    if (s.kind === 'package' && s.package !== undefined && !outermostOf.has(s.package)) {
      outermostOf.set(s.package, topPackageOf(s) ?? s.package);
    }
  }
  for (const s of boot.steps) {
    if (s.kind !== 'package' || s.package === undefined) continue;
    // A package a library required at run time (TypeORM's pg, in a factory) goes where that library is listed.
    const outermost = topPackageOf(s);
    const top =
      outermost === s.package && s.requiredBy !== undefined
        ? (outermostOf.get(s.requiredBy) ?? s.requiredBy)
        : outermost;
    if (top === undefined || top === s.package) continue;
    let inner = nested.get(top);
    if (!inner) nested.set(top, (inner = new Map()));
    inner.set(s.package, (inner.get(s.package) ?? 0) + s.self);
  }
  const entries = (name: string) => boot.steps.filter((s) => s.kind === 'package' && s.package === name);
  for (const p of boot.packages
    .filter((x) => x.topLevel)
    .sort((a, b) => b.inclusive - a.inclusive)
    .slice(0, ROW_LIMIT)) {
    const details = el('details', { class: 'package' });
    const summary = el('summary');
    const first = entries(p.name)[0];
    summary.append(
      row(
        scale,
        `${p.name}${p.version ? `@${p.version}` : ''}`,
        `${p.files} files, ${p.loads} loads`,
        first?.start ?? 0,
        first?.end ?? 0,
        {
          kind: 'package',
          figure: `${ms(p.inclusive)} / ${ms(p.self)} ms`,
        },
      ),
    );
    details.append(summary);
    const inner = [...(nested.get(p.name) ?? new Map<string, number>())].sort((a, b) => b[1] - a[1]);
    const list = el('ul', { class: 'nested' });
    for (const [name, self] of inner.slice(0, 50)) list.append(el('li', {}, `${name}: ${ms(self)} ms`));
    if (inner.length > 50) list.append(el('li', {}, `… ${inner.length - 50} more`));
    details.append(list);
    packages.append(details);
  }
  section.append(packages);

  // 4. What no step covers.
  const gaps = boot.coverage.gaps.filter((g) => g.end - g.start >= 1);
  if (gaps.length > 0) {
    const unattributed = block(
      `Unattributed: ${ms(boot.coverage.unattributed)} ms`,
      'Time no step covers (the application’s own code between framework phases, for one).',
    );
    for (const g of gaps) {
      unattributed.append(
        row(scale, `after ${g.after ?? 'start'}`, `before ${g.before ?? 'ready'}`, g.start, g.end, { kind: 'gap' }),
      );
    }
    section.append(unattributed);
  }
  return section;
}
