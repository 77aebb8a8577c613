import path from 'node:path';
import { InvalidValue, type SettingType } from './settings';

/*
 * The types of value most settings have: how a raw option or environment variable text is checked and read.
 * A product declares its own beside its table when none fits (see oneOf, someOf).
 */

export const BOOLEAN: SettingType<boolean> = {
  kind: 'boolean',
  parse(raw) {
    if (typeof raw === 'boolean') return raw;
    const text = String(raw).trim().toLowerCase();
    if (text === 'true') return true;
    if (text === 'false') return false;
    return new InvalidValue('expected true or false');
  },
};

/** Items of a comma-separated list or of an array of strings, trimmed, empty ones dropped. */
export function parseList(raw: unknown): string[] | InvalidValue {
  const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : undefined;
  if (items === undefined) return new InvalidValue('expected a comma-separated list or an array of strings');
  const out: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string') return new InvalidValue('expected a comma-separated list or an array of strings');
    const trimmed = item.trim();
    if (trimmed !== '') out.push(trimmed);
  }
  return out;
}

export const LIST: SettingType<readonly string[], string[] | string> = { kind: 'list', parse: parseList };

/** An absolute path (a relative one is resolved against the current directory). */
export const PATH: SettingType<string> = {
  kind: 'path',
  parse(raw) {
    if (typeof raw !== 'string' || raw.trim() === '') return new InvalidValue('expected a non-empty path');
    if (raw.includes('\0')) return new InvalidValue('a path cannot contain a null byte');
    return path.resolve(raw.trim());
  },
};

/** A URL path prefix: one leading `/`, no trailing one. */
export const BASE_PATH: SettingType<string> = {
  kind: 'basePath',
  parse(raw) {
    if (typeof raw !== 'string') return new InvalidValue('expected a path such as /actuator');
    let p = raw.trim();
    if (!p.startsWith('/')) p = `/${p}`;
    p = p.replace(/\/+$/, '');
    if (!/^[A-Za-z0-9\-._~/]*$/.test(p) || p.includes('//')) {
      return new InvalidValue('expected a path of letters, digits, "-", ".", "_", "~" and single "/"');
    }
    return p;
  },
};

function wholeNumber(kind: string, check: (n: number) => InvalidValue | undefined): SettingType<number> {
  return {
    kind,
    parse(raw) {
      const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : '';
      if (!/^\d+$/.test(text)) return new InvalidValue('expected a whole number');
      const n = Number(text);
      const invalid = check(n);
      if (invalid) return invalid;
      if (!Number.isSafeInteger(n)) return new InvalidValue('number too large');
      return n;
    },
  };
}

export const NON_NEGATIVE_INT = wholeNumber('nonNegativeInt', () => undefined);
export const POSITIVE_INT = wholeNumber('positiveInt', (n) =>
  n < 1 ? new InvalidValue('expected a whole number of at least 1') : undefined,
);
export const PORT = wholeNumber('port', (n) =>
  n > 65535 ? new InvalidValue('expected a port from 0 to 65535') : undefined,
);

/** A number of at least 0, fractions allowed (`0.5`, `1e-3`): thresholds a test sets in seconds. */
export const NON_NEGATIVE_NUMBER: SettingType<number> = {
  kind: 'nonNegativeNumber',
  parse(raw) {
    const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : '';
    const n = text === '' ? Number.NaN : Number(text);
    if (!Number.isFinite(n) || n < 0) return new InvalidValue('expected a number of at least 0');
    return n;
  },
};

/** A fraction from 0 to 1 (`0.25`): a share, such as the tracked share of a service's processes. */
export const FRACTION: SettingType<number> = {
  kind: 'fraction',
  parse(raw) {
    const n = NON_NEGATIVE_NUMBER.parse(raw);
    if (typeof n === 'number' && n > 1) return new InvalidValue('expected a fraction from 0 to 1');
    return n instanceof InvalidValue ? new InvalidValue('expected a fraction from 0 to 1') : n;
  },
};

/** Milliseconds, one second at least: a period a timer runs at (shorter would cost the application's calls). */
export const SECOND_OR_MORE_MS = wholeNumber('secondOrMoreMs', (n) =>
  n < 1000 ? new InvalidValue('expected a whole number of milliseconds of at least 1000') : undefined,
);

export const HOST: SettingType<string> = {
  kind: 'host',
  parse(raw) {
    if (typeof raw !== 'string' || raw.trim() === '' || /[\s/]/.test(raw.trim())) {
      return new InvalidValue('expected a host name or IP address');
    }
    return raw.trim();
  },
};

export const STRING: SettingType<string> = {
  kind: 'string',
  parse(raw) {
    if (typeof raw !== 'string' || raw === '') return new InvalidValue('expected a non-empty string');
    return raw;
  },
};

/** One of `values`, compared ignoring case and surrounding spaces. */
export function oneOf<const V extends string>(kind: string, values: readonly V[]): SettingType<V> {
  return {
    kind,
    parse(raw) {
      const text = String(raw).trim().toLowerCase();
      return (values as readonly string[]).includes(text)
        ? (text as V)
        : new InvalidValue(`expected ${values.join(' or ')}`);
    },
  };
}

/** Some of `names`, or `*` for all of them, as a list. */
export function someOf(kind: string, names: readonly string[]): SettingType<readonly string[], string[] | string> {
  return {
    kind,
    parse(raw) {
      const list = parseList(raw);
      if (list instanceof InvalidValue) return list;
      const unknown = list.filter((name) => name !== '*' && !names.includes(name));
      if (unknown.length > 0)
        return new InvalidValue(`expected * or some of ${names.join(', ')}; unknown: ${unknown.join(', ')}`);
      return list;
    },
  };
}
