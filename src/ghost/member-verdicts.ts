/**
 * Verdicts below the bean (issue #43): each tracked bean's methods and the entry points the framework calls
 * (routes, resolvers, listeners, jobs), judged with the beans' vocabulary and thresholds (verdicts.ts) on the
 * evidence of the bean they belong to. A method is `in-use` once it was called on any instance of its class; an
 * endpoint takes its handler method's verdict, except a job whose schedule fires less often than the evidence
 * window, which silence cannot judge.
 */
import { endpointName, type EndpointRecord } from './analysis/bean-graph';
import type { Contract } from './contracts';
import { span, verdictOf, VERDICT_ORDER, type BeanEvidence, type EvidenceThresholds, type Verdict } from './verdicts';

/** Where a method is defined: the file (relative to the application's directory when inside it) and its line. */
export interface MemberSource {
  readonly file: string;
  readonly line: number;
}

/** One method of a tracked bean (the contract's `methods: [{ name, verdict, source? }]`). */
export interface MethodVerdict {
  readonly name: string;
  readonly verdict: Verdict;
  readonly source?: MemberSource;
  /** ISO time of its first call, when it was called. */
  readonly lastTouched?: string;
  /** Rare on purpose (`@Kept`, `diag.ghost-tracking.kept`): the reason; never a finding. */
  readonly kept?: string;
  /**
   * Not called on this bean, but its code is shared (an inherited method of a common base class: the same file and
   * line) and these other beans called it: the code is live, nothing to delete, never a finding (sharedCode).
   */
  readonly calledThrough?: readonly string[];
  /** Why, when it is not the plain verdict of its calls (a handler of endpoints that were not served). */
  readonly why?: string;
  /** Never called, and declared by an interface or abstract class its class implements (set where sources are read). */
  readonly contract?: MethodContract;
}

/**
 * The interface or abstract class that declares a never-called method, as src/ghost/contracts.ts reads it from the
 * application's TypeScript, and the beans whose own implementation of that member was called (it stays then).
 */
export interface MethodContract extends Contract {
  readonly calledIn?: readonly string[];
}

/** One entry point with its handler's verdict (the contract's `endpoints: [{ kind, route, bean, method, verdict, source? }]`). */
export interface EndpointVerdict {
  readonly kind: EndpointRecord['kind'];
  readonly route: string;
  /** GraphQL: the path of the API serving the field (`/shop-api`), when known (EndpointRecord's `path`). */
  readonly path?: string;
  readonly bean: string;
  readonly method: string;
  readonly verdict: Verdict;
  readonly source?: MemberSource;
  readonly lastTouched?: string;
  readonly kept?: string;
  /** Why, when it is not the handler method's plain verdict (a rare job, a handler not tracked). */
  readonly why?: string;
  /** Jobs: when it fires next, as the inventory says. */
  readonly nextAt?: string;
}

/** What a bean's methods are known by: each method's first call (ms), undefined when never called. */
export type MethodCalls = ReadonlyMap<string, number | undefined>;

/**
 * A member's own evidence where the ledger knows it apart from its bean's: a method or an endpoint is judged on the
 * variants (versions × inventories) that had it, so one a deploy added starts its evidence at that deploy and one a
 * deploy removed retires while its bean lives on.
 */
export type MemberFacts = Pick<
  BeanEvidence,
  'firstSeen' | 'processHours' | 'untrackedProcessHours' | 'processes' | 'versions' | 'live'
>;

/** Looks up what the report adds per method: its source line and whether it is kept. */
export interface MemberLookups {
  readonly source?: (bean: string, method: string) => MemberSource | undefined;
  readonly kept?: (bean: string, method: string) => string | undefined;
  /** For endpoints: kept by their route (`diag.ghost-tracking.kept` patterns). */
  readonly keptEndpoint?: (endpoint: EndpointRecord) => string | undefined;
}

const byVerdictThenName =
  <T extends { verdict: Verdict }>(key: (t: T) => string) =>
  (a: T, b: T) =>
    VERDICT_ORDER.indexOf(a.verdict) - VERDICT_ORDER.indexOf(b.verdict) ||
    (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

/**
 * The verdicts of a bean's methods, most likely dead first: the bean's own rules and evidence, with the
 * method's first call for the bean's. A retired or untrackable bean's methods share its verdict.
 */
export function methodVerdicts(
  bean: BeanEvidence,
  calls: MethodCalls,
  thresholds: EvidenceThresholds,
  now: number,
  lookups: MemberLookups = {},
  /** Each method's own evidence, when known apart from the bean's (the ledger). */
  facts?: (method: string) => MemberFacts | undefined,
): MethodVerdict[] {
  const out: MethodVerdict[] = [];
  for (const [name, calledAt] of calls) {
    const { lastTouched: _bean, lastTouchedVersion: _version, ...rest } = bean;
    const judged = verdictOf(
      { ...rest, ...facts?.(name), ...(calledAt !== undefined ? { lastTouched: calledAt } : {}) },
      thresholds,
      now,
    );
    const source = lookups.source?.(bean.name, name);
    const kept = lookups.kept?.(bean.name, name);
    out.push({
      name,
      verdict: judged.verdict,
      ...(source !== undefined ? { source } : {}),
      ...(judged.lastTouched !== undefined ? { lastTouched: judged.lastTouched } : {}),
      ...(kept !== undefined ? { kept } : {}),
    });
  }
  return out.sort(byVerdictThenName((m) => m.name));
}

/** Where a method's code is, as a key: its file, line and name; undefined without a line (it is never joined). */
export function codeSite(method: string, source: MemberSource | undefined): string | undefined {
  return source === undefined ? undefined : `${source.file}:${source.line}#${method}`;
}

/** The verdicts a method's code counts as run in: called within the window, or called before it. */
const CALLED: ReadonlySet<Verdict> = new Set(['in-use', 'dormant']);

/**
 * `beans` with each uncalled method whose code another bean called marked `calledThrough` those beans. Two beans
 * whose classes inherit one base's method share its code: `WalletRepository` never calling `delete` says nothing
 * of `SqlRepositoryBase.delete`'s line when `UserRepository` calls it (a real app's repositories, found on a trial:
 * the line was annotated dead while it ran). The code is known by its source line and name, what a reader of
 * the ledger knows of it across processes; a method without a source line stands alone. The bean's own verdict
 * stays (never called on it is what was seen); what changes is that it is no finding.
 */
export function sharedCode<B extends { readonly name: string; readonly methods?: readonly MethodVerdict[] }>(
  beans: readonly B[],
): B[] {
  const callers = new Map<string, string[]>();
  const codeOf = (m: MethodVerdict) => codeSite(m.name, m.source);
  for (const b of beans)
    for (const m of b.methods ?? []) {
      const code = codeOf(m);
      if (code === undefined || !CALLED.has(m.verdict)) continue;
      const list = callers.get(code);
      if (list === undefined) callers.set(code, [b.name]);
      else list.push(b.name);
    }
  if (callers.size === 0) return [...beans];
  return beans.map((b) => {
    let changed = false;
    const methods = b.methods?.map((m) => {
      const code = codeOf(m);
      const through = code === undefined || CALLED.has(m.verdict) ? undefined : callers.get(code);
      if (through === undefined || m.verdict === 'untrackable' || m.verdict === 'retired') return m;
      changed = true;
      return { ...m, calledThrough: [...through].sort() };
    });
    return changed ? { ...b, methods } : b;
  });
}

/** The verdicts an unserved handler's silence would wrongly support: what it turns into `untrackable`. */
const SILENT: ReadonlySet<Verdict> = new Set(['never-touched', 'insufficient-evidence']);

/**
 * `beans` with each silent one (never called, or not judged yet) that holds a kept member marked `kept`: the first
 * kept method by name, or the first kept endpoint it handles, and why. A trial of domain-driven-hexagon found its
 * GraphQL resolver, whose only method is the API's only `Query` field (kept: the schema needs it), listed as a
 * never-touched bean with "Delete it": removing it stops the application starting, as removing the field does.
 */
export function withKeptMembers<
  B extends {
    readonly name: string;
    readonly verdict: Verdict;
    readonly kept?: string;
    readonly methods?: readonly MethodVerdict[];
  },
>(beans: readonly B[], endpoints: readonly EndpointVerdict[] | undefined): B[] {
  const byEndpoint = new Map<string, string>();
  for (const e of endpoints ?? [])
    if (e.kept !== undefined && !byEndpoint.has(e.bean)) byEndpoint.set(e.bean, `with ${endpointName(e)}: ${e.kept}`);
  return beans.map((b) => {
    if (!SILENT.has(b.verdict) || b.kept !== undefined) return b;
    const method = b.methods?.filter((m) => m.kept !== undefined).sort((x, y) => (x.name < y.name ? -1 : 1))[0];
    const kept = method !== undefined ? `with its method ${method.name}: ${method.kept}` : byEndpoint.get(b.name);
    return kept === undefined ? b : { ...b, kept };
  });
}

/** What an endpoint that was not served says of its silence. */
const unservedWhy = (reason: string) => `not served: ${reason}; no call could reach it, so its silence says nothing`;

/**
 * Handlers no call could reach where they were observed (EndpointRecord's `unserved`): per bean, each method all of
 * whose endpoints were not served, with the reason; and `whole` when none of the bean's endpoints was.
 */
export interface UnservedHandlers {
  readonly methods: ReadonlyMap<string, string>;
  readonly whole?: string;
}

/** Per bean, its unserved handlers; a bean with any served endpoint, or none, has no `whole`. */
export function unservedHandlers(endpoints: readonly EndpointRecord[]): ReadonlyMap<string, UnservedHandlers> {
  const byBean = new Map<string, { served: Set<string>; unserved: Map<string, string> }>();
  for (const e of endpoints) {
    let b = byBean.get(e.bean);
    if (b === undefined) byBean.set(e.bean, (b = { served: new Set(), unserved: new Map() }));
    if (e.unserved === undefined) b.served.add(e.method);
    else if (!b.unserved.has(e.method)) b.unserved.set(e.method, e.unserved);
  }
  const out = new Map<string, UnservedHandlers>();
  for (const [bean, { served, unserved }] of byBean) {
    for (const method of served) unserved.delete(method);
    if (unserved.size === 0) continue;
    out.set(bean, { methods: unserved, ...(served.size === 0 ? { whole: [...unserved.values()][0]! } : {}) });
  }
  return out;
}

/** A bean as the rules below rewrite it: its verdict, why, what it still needs, its methods. */
type Silenceable = { verdict: Verdict; why: string; needs?: unknown; methods?: readonly MethodVerdict[] };

/**
 * `bean` where no call could reach it, or some of its methods: `beanWhy` makes the bean `untrackable` (its `needs`
 * dropped), `methodWhy` each method it names, where the verdict would have read its silence (`never-touched`,
 * `insufficient-evidence`); a method called, kept on purpose, or a bean in use keeps its verdict. The one rewrite
 * behind both rules that know the silence says nothing (`withUnserved`, the ledger answer's `reachedThroughUnserved`).
 */
export function silenceSaysNothing<B extends Silenceable>(
  bean: B,
  beanWhy: string | undefined,
  methodWhy: (method: string) => string | undefined,
): B {
  let changed = false;
  const methods = bean.methods?.map((m) => {
    const why = methodWhy(m.name);
    if (why === undefined || !SILENT.has(m.verdict) || m.kept !== undefined) return m;
    changed = true;
    return { ...m, verdict: 'untrackable' as const, why };
  });
  const whole = beanWhy !== undefined && SILENT.has(bean.verdict);
  if (!changed && !whole) return bean;
  const { needs: _needs, ...rest } = bean;
  return {
    ...(whole ? { ...rest, verdict: 'untrackable' as const, why: beanWhy } : bean),
    ...(methods !== undefined ? { methods: methods.sort(byVerdictThenName((m) => m.name)) } : {}),
  } as B;
}

/**
 * A bean's verdicts where its endpoints were not served: a method that only handles unserved endpoints, and every
 * method of a bean none of whose endpoints was served (its helpers are reached through them), is `untrackable`
 * instead of `never-touched` or `insufficient-evidence`; so is the bean itself in the second case. A method that
 * was called keeps its verdict: something else reached it.
 */
export function withUnserved<B extends Silenceable>(bean: B, unserved: UnservedHandlers | undefined): B {
  if (unserved === undefined) return bean;
  return silenceSaysNothing(
    bean,
    unserved.whole === undefined
      ? undefined
      : `its endpoints are not served: ${unserved.whole}; no call could reach them, so its silence says nothing`,
    (method) => {
      const reason = unserved.methods.get(method) ?? unserved.whole;
      return reason === undefined ? undefined : unservedWhy(reason);
    },
  );
}

/** A bean as the endpoints' join needs it: its verdict and its methods'. */
export interface JudgedBean {
  readonly name: string;
  readonly verdict: Verdict;
  readonly methods?: readonly MethodVerdict[];
}

const DAY_MS = 86_400_000;

/**
 * Every endpoint with its handler method's verdict, most likely dead first. A job whose schedule fires less
 * often than the evidence window (`thresholds.minDays`) is never judged by its silence: `insufficient-evidence`,
 * saying when it fires next. An endpoint whose handler has no method verdict (its bean untrackable, or tracked at
 * bean depth) takes the bean's verdict when that is not `in-use` (a call of another method proves nothing of
 * this one), else `untrackable`. Endpoints of beans that are not the application's (a framework's own) are left out.
 */
export function endpointVerdicts(
  endpoints: readonly EndpointRecord[],
  beans: readonly JudgedBean[],
  thresholds: EvidenceThresholds,
  lookups: MemberLookups = {},
  /** Each endpoint's own evidence (the ledger: the variants that served it), judged at `now`. */
  own?: { readonly facts: (endpoint: EndpointRecord) => MemberFacts | undefined; readonly now: number },
): EndpointVerdict[] {
  const byName = new Map(beans.map((b) => [b.name, b]));
  return (
    endpoints
      // A handler that is not one of the application's beans is a framework's (Vendure's 519 resolvers of its own, on
      // a trial): like a framework bean, its endpoints are not the application's to delete, so they are not judged
      // here; diag-report.json's inventory still lists every endpoint.
      .filter((e) => byName.has(e.bean))
      .map((e): EndpointVerdict => {
        const bean = byName.get(e.bean);
        const method = bean?.methods?.find((m) => m.name === e.method);
        let verdict: Verdict;
        let why: string | undefined;
        if (method !== undefined) {
          verdict = method.verdict;
        } else if (bean === undefined) {
          verdict = 'untrackable'; // filtered out above
        } else if (bean.verdict === 'in-use' || bean.verdict === 'never-touched') {
          verdict = bean.verdict === 'in-use' ? 'untrackable' : 'never-touched';
          if (verdict === 'untrackable') why = `its handler method ${e.method} is not tracked (bean depth?)`;
        } else {
          verdict = bean.verdict;
        }
        const facts = e.unserved === undefined ? own?.facts(e) : undefined;
        if (e.unserved !== undefined) {
          // Whatever its handler's calls: the endpoint itself could not be called.
          verdict = 'untrackable';
          why = unservedWhy(e.unserved);
        } else if (facts !== undefined && !facts.live) {
          verdict = 'retired';
          why = "the service's current code does not serve it any more (removed, renamed or moved)";
        } else if (facts !== undefined && method !== undefined && verdict !== 'untrackable') {
          // Its handler's last use, on the endpoint's own evidence: a route a deploy added to an old method starts
          // its evidence at that deploy, whatever the method's.
          const judged = verdictOf(
            {
              name: endpointName(e),
              ghostCandidate: false,
              tracked: true,
              ...facts,
              ...(method.lastTouched !== undefined ? { lastTouched: Date.parse(method.lastTouched) } : {}),
            },
            thresholds,
            own!.now,
          );
          if (judged.verdict !== verdict) why = judged.why;
          verdict = judged.verdict;
        }
        const rare = SILENT.has(verdict) ? rareJob(e, thresholds) : undefined;
        if (rare !== undefined) {
          verdict = 'insufficient-evidence';
          why = rare;
        }
        const source = method?.source ?? lookups.source?.(e.bean, e.method);
        const kept = lookups.keptEndpoint?.(e) ?? method?.kept ?? lookups.kept?.(e.bean, e.method);
        return {
          kind: e.kind,
          route: e.route,
          ...(e.path !== undefined ? { path: e.path } : {}),
          bean: e.bean,
          method: e.method,
          verdict,
          ...(source !== undefined ? { source } : {}),
          ...(method?.lastTouched !== undefined ? { lastTouched: method.lastTouched } : {}),
          ...(kept !== undefined ? { kept } : {}),
          ...(why !== undefined ? { why } : {}),
          ...(e.schedule?.nextAt !== undefined ? { nextAt: e.schedule.nextAt } : {}),
        };
      })
      .sort(byVerdictThenName<EndpointVerdict>(endpointName))
  );
}

/** Why silence cannot judge this job, when its schedule fires less often than the evidence window. */
function rareJob(e: EndpointRecord, thresholds: EvidenceThresholds): string | undefined {
  if (e.kind !== 'cron' && e.kind !== 'interval' && e.kind !== 'timeout') return undefined;
  const every = e.schedule?.everyMs ?? (e.schedule?.cron !== undefined ? cronPeriodMs(e.schedule.cron) : undefined);
  const window = thresholds.minDays * DAY_MS;
  if (every === undefined || every <= window) return undefined;
  const next = e.schedule?.nextAt !== undefined ? `; it fires next at ${e.schedule.nextAt}` : '';
  return `fires about every ${span(every)}, less often than the evidence window of ${span(window)}: its silence proves nothing${next}`;
}

/**
 * About how long a cron expression waits between two firings, from its coarsest restricted field (seconds
 * optional, as `cron` and `@nestjs/schedule` accept): a month or a day of the month named makes it monthly or
 * rarer, a weekday weekly, an hour daily. Errs towards "rarer", the safe side: a job judged too rare is only
 * left unjudged. Undefined when the expression is not understood.
 */
export function cronPeriodMs(cron: string): number | undefined {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) return undefined;
  const [, hour, dom, month, dow] = fields.length === 6 ? fields.slice(1) : fields;
  const restricted = (f: string | undefined) => f !== undefined && f !== '*' && f !== '?';
  const count = (f: string) => (f.startsWith('*/') ? undefined : f.split(',').length);
  if (restricted(month)) {
    const n = count(month!);
    return n === undefined ? 31 * DAY_MS * Number(month!.slice(2) || 1) : (365 * DAY_MS) / n;
  }
  if (restricted(dom)) return 28 * DAY_MS;
  if (restricted(dow)) return 7 * DAY_MS;
  if (restricted(hour)) return DAY_MS;
  return 3_600_000;
}
