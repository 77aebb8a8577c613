/**
 * When a cron expression next fires: what a job's silence is judged against (a yearly job is never judged by a
 * quiet fortnight). Our own small reader of the grammar `@nestjs/schedule` accepts (the `cron` package's): five
 * fields, or six with seconds first; `*`, `?`, lists, ranges, steps, month and day names, 7 for Sunday, and the
 * `@yearly`… macros. A day of the month and a day of the week both restricted match either, as in cron(8).
 * Computed in the process's local time, as the job runs without a `timeZone`.
 */

interface CronFields {
  readonly seconds: ReadonlySet<number>;
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly days: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  readonly weekdays: ReadonlySet<number>;
  readonly daysRestricted: boolean;
  readonly weekdaysRestricted: boolean;
}

const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 0 1 1 *',
  '@annually': '0 0 0 1 1 *',
  '@monthly': '0 0 0 1 * *',
  '@weekly': '0 0 0 * * 0',
  '@daily': '0 0 0 * * *',
  '@midnight': '0 0 0 * * *',
  '@hourly': '0 0 * * * *',
};

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/** Far enough for any real schedule (29 February included), short enough to give up fast on `30 2 *`. */
const SEARCH_YEARS = 8;

function parseField(field: string, min: number, max: number, names?: readonly string[], nameBase = 0): Set<number> {
  const out = new Set<number>();
  const value = (text: string): number => {
    const named = names?.indexOf(text.toLowerCase()) ?? -1;
    const n = named >= 0 ? named + nameBase : Number(text);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`'${text}' is not in ${min}-${max}`);
    return n;
  };
  for (const part of field.split(',')) {
    const [range, stepText] = part.split('/') as [string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) throw new Error(`bad step in '${part}'`);
    let from: number;
    let to: number;
    if (range === '*' || range === '?') [from, to] = [min, max];
    else if (range.includes('-')) {
      const [a, b] = range.split('-') as [string, string];
      [from, to] = [value(a), value(b)];
    } else {
      from = value(range);
      to = stepText === undefined ? from : max;
    }
    if (from > to) throw new Error(`empty range '${part}'`);
    for (let n = from; n <= to; n += step) out.add(n);
  }
  return out;
}

/** The expression read, or an Error saying what is wrong with it. */
export function parseCron(expression: string): CronFields | Error {
  try {
    const text = MACROS[expression.trim().toLowerCase()] ?? expression.trim();
    const fields = text.split(/\s+/);
    if (fields.length === 5) fields.unshift('0');
    if (fields.length !== 6) return new Error(`'${expression}' has ${fields.length} fields, not 5 or 6`);
    const [s, m, h, dom, mon, dow] = fields as [string, string, string, string, string, string];
    const weekdays = parseField(dow, 0, 7, DAY_NAMES);
    if (weekdays.delete(7)) weekdays.add(0);
    return {
      seconds: parseField(s, 0, 59),
      minutes: parseField(m, 0, 59),
      hours: parseField(h, 0, 23),
      days: parseField(dom, 1, 31),
      months: parseField(mon, 1, 12, MONTH_NAMES, 1),
      weekdays,
      daysRestricted: dom !== '*' && dom !== '?',
      weekdaysRestricted: dow !== '*' && dow !== '?',
    };
  } catch (err) {
    return new Error(`'${expression}': ${(err as Error).message}`);
  }
}

function dayMatches(f: CronFields, d: Date): boolean {
  const day = f.days.has(d.getDate());
  const weekday = f.weekdays.has(d.getDay());
  if (f.daysRestricted && f.weekdaysRestricted) return day || weekday;
  return day && weekday;
}

/**
 * The first time after `from` (to the second) that `expression` fires, in local time; undefined for an
 * expression that cannot be read or never fires within {@link SEARCH_YEARS} years (`0 0 30 2 *`).
 */
export function nextCronTime(expression: string, from: Date = new Date()): Date | undefined {
  const f = parseCron(expression);
  if (f instanceof Error) return undefined;
  const t = new Date(from.getTime());
  t.setMilliseconds(0);
  t.setSeconds(t.getSeconds() + 1);
  const limit = from.getFullYear() + SEARCH_YEARS;
  // Each step moves to the start of the next unit that can match: a few hundred steps at most per year searched.
  while (t.getFullYear() <= limit) {
    if (!f.months.has(t.getMonth() + 1)) {
      t.setMonth(t.getMonth() + 1, 1);
      t.setHours(0, 0, 0);
    } else if (!dayMatches(f, t)) {
      t.setDate(t.getDate() + 1);
      t.setHours(0, 0, 0);
    } else if (!f.hours.has(t.getHours())) {
      t.setHours(t.getHours() + 1, 0, 0);
    } else if (!f.minutes.has(t.getMinutes())) {
      t.setMinutes(t.getMinutes() + 1, 0);
    } else if (!f.seconds.has(t.getSeconds())) {
      t.setSeconds(t.getSeconds() + 1);
    } else {
      return t;
    }
  }
  return undefined;
}
