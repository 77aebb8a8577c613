/**
 * A joint view of several services of one repository (a monorepo's apps writing to one ledger): a class
 * registered in two apps and never called in one of them is dead *there* only. On a real monorepo 9 of one app's
 * 14 candidates were shared-library classes its sibling app used (issue #44): the answer for the container was
 * right, the action was not "delete the class" but "remove the registration". This module turns the services'
 * verdicts, each from its own ledger answer, into that action per class; it reads nothing itself.
 */
import type { Verdict } from '../verdicts';
import type { LedgerAnswer } from './answer';

/** What to do about one class across the services that register it. */
export type JointAction =
  /** Never touched in every service that has it: the class itself is dead weight. */
  | 'delete-class'
  /** Never touched in some services, in use in another: remove the registration where it is never touched. */
  | 'remove-registration'
  /** In use where it is registered, or not judged yet somewhere (insufficient evidence, untrackable): nothing. */
  | 'keep';

/** One class, as each service sees it. */
export interface JointClass {
  /** The class name (or the bean name for a bean with no class: a value, a factory). */
  readonly className: string;
  readonly source?: string;
  /** Per service: the bean name there and its verdict. */
  readonly services: Readonly<Record<string, { readonly bean: string; readonly verdict: Verdict }>>;
  readonly action: JointAction;
  /** The services whose registration to remove (`remove-registration`), or that have it (`delete-class`). */
  readonly where: readonly string[];
  /** The services that use it, for `remove-registration`. */
  readonly usedIn: readonly string[];
  /** One line a person reads: "registered in app-api and never used there, used in admin-api". */
  readonly why: string;
  /**
   * For a bean that stands at its registration (a library's class, a value, a factory, a class whose file was not
   * found): every registration of it, in every service and module, where the lines to remove are.
   */
  readonly registrations?: readonly JointRegistration[];
  /**
   * The ghost candidates that alone inject it in some service: it goes together with them (a registration removed
   * alone leaves them unresolvable, and the application does not start).
   */
  readonly neededOnlyBy?: readonly string[];
}

/** Where one service's module registers a bean that stands at its registration. */
export interface JointRegistration {
  readonly service: string;
  readonly bean: string;
  readonly source?: string;
  readonly line?: number;
}

/** `diag-instrumentation ledger --service a,b`'s answer. */
export interface JointAnswer {
  readonly services: readonly string[];
  /** Classes to act on first (delete-class, remove-registration), then the rest, each by name. */
  readonly classes: readonly JointClass[];
  /**
   * The services gone silent (no live process, or no recent write): their verdicts are those of their code as last
   * seen running, which a person acting on the view must know (`ledger` on one such service exits 2).
   */
  readonly silent?: readonly string[];
}

/** Which of one class's beans in one service speaks for it: in use beats the rest, never-touched beats undecided. */
const STRENGTH: Readonly<Record<Verdict, number>> = {
  'in-use': 5,
  // Used before, not within the window: neither "used there" nor "never used there" (no action of its own).
  dormant: 4,
  'never-touched': 3,
  'insufficient-evidence': 2,
  untrackable: 1,
  retired: 0,
};

const ORDER: Readonly<Record<JointAction, number>> = { 'remove-registration': 0, 'delete-class': 1, keep: 2 };

/** The joint view of `answers`, one per service. A class is known by its name and, when both have one, its file. */
export function jointView(answers: readonly LedgerAnswer[]): JointAnswer {
  const byClass = new Map<
    string,
    {
      className: string;
      source?: string;
      registered: boolean;
      classFileUnknown: boolean;
      registrations: JointRegistration[];
      neededOnlyBy: Set<string>;
      services: Map<string, { bean: string; verdict: Verdict }>;
    }
  >();
  for (const answer of answers) {
    for (const bean of answer.beans) {
      if (bean.verdict === 'retired') continue;
      const className = bean.className ?? bean.name;
      // A library's class, a value or a factory is known by its name alone: its `source` is a module's. A class whose
      // file was not found keeps its module's file in its key: two services' classes of one name may be unrelated.
      const source = bean.registered && !bean.classFileUnknown ? undefined : bean.source;
      const key = `${className}\u0000${source ?? ''}`;
      let entry = byClass.get(key);
      if (entry === undefined) {
        entry = {
          className,
          ...(source !== undefined ? { source } : {}),
          registered: false,
          classFileUnknown: false,
          registrations: [],
          neededOnlyBy: new Set(),
          services: new Map(),
        };
        byClass.set(key, entry);
      }
      for (const candidate of bean.neededOnlyBy ?? []) entry.neededOnlyBy.add(candidate);
      if (bean.registered) {
        entry.registered = true;
        if (bean.classFileUnknown) entry.classFileUnknown = true;
        entry.registrations.push({
          service: answer.service,
          bean: bean.name,
          ...(bean.source !== undefined ? { source: bean.source } : {}),
          ...(bean.line !== undefined ? { line: bean.line } : {}),
        });
      }
      const seen = entry.services.get(answer.service);
      if (seen === undefined || STRENGTH[bean.verdict] > STRENGTH[seen.verdict]) {
        entry.services.set(answer.service, { bean: bean.name, verdict: bean.verdict });
      }
    }
  }
  const classes: JointClass[] = [];
  for (const entry of byClass.values()) {
    const services = [...entry.services.keys()].sort();
    const never = services.filter((s) => entry.services.get(s)!.verdict === 'never-touched');
    const used = services.filter((s) => entry.services.get(s)!.verdict === 'in-use');
    let action: JointAction = 'keep';
    let where: string[] = [];
    let why = `in use or not judged yet in ${services.join(', ')}`;
    if (never.length > 0 && used.length > 0) {
      action = 'remove-registration';
      where = never;
      why = `registered in ${never.join(', ')} and never used there, used in ${used.join(', ')}: remove the registration, not the class`;
    } else if (never.length > 0 && never.length === services.length && entry.registered) {
      // A library's class it lists, a value, a factory: nothing to delete but the lines. A class whose file was not
      // found is not known to be the application's, nor a library's: the registrations go, and the words say so.
      action = 'remove-registration';
      where = never;
      why = entry.classFileUnknown
        ? `never used in ${never.join(', ')}, every service that registers it: remove the registrations; its class's file was not found (a class no module exports, or a library's): if the class is the application's, delete it too`
        : `never used in ${never.join(', ')}, every service that registers it; a library's class, a value or a factory: remove the registrations`;
    } else if (never.length > 0 && never.length === services.length) {
      action = 'delete-class';
      where = never;
      why = `never used in ${never.join(', ')}, every service that registers it`;
    }
    // What only candidates inject goes together with them, in whichever service that holds: said with the action.
    const together = [...entry.neededOnlyBy].sort();
    if (action !== 'keep' && together.length > 0) {
      why += `; together with ${together.join(', ')}, which alone ${together.length === 1 ? 'injects' : 'inject'} it`;
    }
    classes.push({
      className: entry.className,
      ...(entry.source !== undefined ? { source: entry.source } : {}),
      services: Object.fromEntries(services.map((s) => [s, entry.services.get(s)!])),
      action,
      where,
      usedIn: action === 'remove-registration' ? used : [],
      why,
      ...(entry.registrations.length > 0 ? { registrations: entry.registrations } : {}),
      ...(together.length > 0 ? { neededOnlyBy: together } : {}),
    });
  }
  classes.sort(
    (a, b) => ORDER[a.action] - ORDER[b.action] || (a.className < b.className ? -1 : a.className > b.className ? 1 : 0),
  );
  const silent = answers.filter((a) => a.provenance.silent).map((a) => a.service);
  return { services: answers.map((a) => a.service), classes, ...(silent.length > 0 ? { silent } : {}) };
}

/** The joint view as a person reads it: the classes to act on, one line each. */
export function jointText(joint: JointAnswer): string {
  const lines = [`joint ghost ledger of ${joint.services.join(', ')}`];
  if (joint.silent !== undefined && joint.silent.length > 0) {
    lines.push(
      `  WARNING: ${joint.silent.join(', ')} ${joint.silent.length === 1 ? 'has' : 'have'} gone silent: ` +
        'the verdicts there are those of the code as last seen running',
    );
  }
  const act = joint.classes.filter((c) => c.action !== 'keep');
  if (act.length === 0) lines.push('  nothing to act on: every shared class is in use or not judged yet');
  for (const c of act) {
    lines.push(`  ${c.action.padEnd(19)} ${c.className}${c.source !== undefined ? ` (${c.source})` : ''}: ${c.why}`);
    // Where the lines to remove are, each service's modules (a library's Logger in two modules of one service).
    for (const r of c.registrations ?? []) {
      if (!c.where.includes(r.service)) continue;
      const at = r.source === undefined ? '' : ` at ${r.source}${r.line !== undefined ? `:${r.line}` : ''}`;
      lines.push(`      registered in ${r.service} as ${r.bean}${at}`);
    }
  }
  lines.push(`  ${joint.classes.length - act.length} more in use or not judged yet`);
  return `${lines.join('\n')}\n`;
}
