import type { SketchRedisSettings } from '../sketch/stores/from-settings';
import path from 'node:path';
import { safeLog } from '../shared/logger';
import { CONTAINER_NAMES } from '../adapters/registry';

/**
 * Every setting has three spellings: a Spring-style property name (the contract's), a field of the
 * constructor options, and an environment variable derived from the property name. Precedence:
 * environment, then options, then default. A malformed value is a warning and the default — configuration
 * never throws into the host application.
 */

/** The validated configuration everything else receives. Resolved once, then read-only. */
export interface DiagConfig {
  readonly ghostTracking: {
    /** `diag.ghost-tracking.enabled`: turns on Phase 2 (first-touch tracking). */
    readonly enabled: boolean;
    /** `diag.ghost-tracking.exclude`: bean names never wrapped, reported as `excluded`. */
    readonly exclude: readonly string[];
  };
  readonly report: {
    /** `diag.report.dir`: absolute directory both report files are written to. */
    readonly dir: string;
    /** `diag.report.flush-interval-ms`: how often the ghost report is rewritten while the app runs (0 = never). */
    readonly flushIntervalMs: number;
    /** `diag.report.run-id`: processes with the same run id merge their ghost reports (default: see defaultRunId). */
    readonly runId: string | undefined;
  };
  readonly containers: {
    /**
     * `diag.containers.include`: the dependency-injection frameworks whose adapter hooks them when they load:
     * `*` (default: every one the process loads) or some of `nestjs`, `inversify`, `tsyringe`, `awilix`.
     */
    readonly include: readonly string[];
  };
  readonly telemetry: {
    /** `diag.telemetry.bean-spans`: one child span per bean instantiation under the start-up span. */
    readonly beanSpans: boolean;
  };
  /** `diag.sketch.redis.*` (declared by the sketches, which read them). */
  readonly sketchRedis: SketchRedisSettings;
  readonly actuator: {
    /** `management.endpoints.web.exposure.include`: exposed endpoint ids (lower-cased), `*` for all; unset = no server. */
    readonly include: readonly string[] | undefined;
    /** `management.endpoints.web.exposure.exclude`: ids never exposed; exclude wins over include. */
    readonly exclude: readonly string[];
    /** `management.endpoints.web.base-path` */
    readonly basePath: string;
    /** `management.server.port` (0 = any free port) */
    readonly port: number;
    /** `management.server.address` */
    readonly address: string;
    /** `management.server.auth-token`: when set, every request needs `Authorization: Bearer <token>`. */
    readonly authToken: string | undefined;
    /** `management.server.auth-token-file`: a file holding the token (a mounted Kubernetes secret, say). */
    readonly authTokenFile: string | undefined;
  };
}

/** Constructor options: every field optional, the same names grouped as the properties are. */
export interface DiagOptions {
  ghostTracking?: { enabled?: boolean; exclude?: string[] | string };
  containers?: { include?: string[] | string };
  report?: { dir?: string; flushIntervalMs?: number; runId?: string };
  telemetry?: { beanSpans?: boolean };
  sketchRedis?: { url?: string; syncIntervalMs?: number; timeoutMs?: number; failMode?: 'open' | 'closed'; keyPrefix?: string };
  actuator?: {
    include?: string[] | string;
    exclude?: string[] | string;
    basePath?: string;
    port?: number;
    address?: string;
    authToken?: string;
    authTokenFile?: string;
  };
}

type Kind = 'boolean' | 'list' | 'containers' | 'path' | 'basePath' | 'port' | 'nonNegativeInt' | 'positiveInt' | 'host' | 'string' | 'failMode' | 'keyPrefix';

interface PropertyDef {
  /** Spring-style name, as in the SPEC. */
  readonly property: string;
  /** Where the value sits in DiagOptions / DiagConfig: [group, field]. */
  readonly at: readonly [string, string];
  readonly kind: Kind;
  readonly defaultValue: () => unknown;
  readonly description: string;
  /** May hold a secret (a password in a URL): a warning about it never quotes the value. */
  readonly secret?: boolean;
}

/** The one table of settings: README's configuration table mirrors it. */
export const PROPERTIES: readonly PropertyDef[] = [
  {
    property: 'diag.ghost-tracking.enabled',
    at: ['ghostTracking', 'enabled'],
    kind: 'boolean',
    defaultValue: () => false,
    description: 'Turns on Phase 2 (first-touch tracking)',
  },
  {
    property: 'diag.ghost-tracking.exclude',
    at: ['ghostTracking', 'exclude'],
    kind: 'list',
    defaultValue: () => [],
    description: 'Bean names never wrapped; reported as `excluded`',
  },
  {
    property: 'diag.containers.include',
    at: ['containers', 'include'],
    kind: 'containers',
    defaultValue: () => ['*'],
    description: 'Which containers are hooked when they load: `*`, or some of `nestjs`, `inversify`, `tsyringe`, `awilix`',
  },
  {
    property: 'diag.report.dir',
    at: ['report', 'dir'],
    kind: 'path',
    defaultValue: () => process.cwd(),
    description: 'Where both report files are written (created if missing)',
  },
  {
    property: 'diag.report.flush-interval-ms',
    at: ['report', 'flushIntervalMs'],
    kind: 'nonNegativeInt',
    defaultValue: () => 30_000,
    description: 'How often the ghost report is rewritten while the app runs, so a crash leaves a recent one (0 = only at close)',
  },
  {
    property: 'diag.report.run-id',
    at: ['report', 'runId'],
    kind: 'string',
    defaultValue: () => undefined,
    description:
      'Processes with the same run id merge their ghost reports; default: the cluster primary for cluster workers, else the process itself',
  },
  {
    property: 'diag.telemetry.bean-spans',
    at: ['telemetry', 'beanSpans'],
    kind: 'boolean',
    defaultValue: () => true,
    description: 'A child span per bean instantiation under the container start-up span',
  },
  {
    property: 'diag.sketch.redis.url',
    at: ['sketchRedis', 'url'],
    kind: 'string',
    defaultValue: () => undefined,
    description: '`redis://[user:password@]host:port[/db]` (or `rediss://` for TLS): every replica holds one limit per sketch through this Redis',
    secret: true,
  },
  {
    property: 'diag.sketch.redis.sync-interval-ms',
    at: ['sketchRedis', 'syncIntervalMs'],
    kind: 'positiveInt',
    defaultValue: () => 100,
    description: 'How often each sketch pushes its changed cells to Redis and reads the fleet’s back',
  },
  {
    property: 'diag.sketch.redis.timeout-ms',
    at: ['sketchRedis', 'timeoutMs'],
    kind: 'positiveInt',
    defaultValue: () => 250,
    description: 'A sync with no answer after this long switches the sketch to local-fallback',
  },
  {
    property: 'diag.sketch.redis.fail-mode',
    at: ['sketchRedis', 'failMode'],
    kind: 'failMode',
    defaultValue: () => 'open',
    description: '`open`: while Redis is away each process admits threshold ÷ nodes per key; `closed`: it rejects',
  },
  {
    property: 'diag.sketch.redis.key-prefix',
    at: ['sketchRedis', 'keyPrefix'],
    kind: 'keyPrefix',
    defaultValue: () => 'diag:sketch:',
    description: 'Prefix of every Redis key the fleet store writes',
  },
  {
    property: 'management.endpoints.web.exposure.include',
    at: ['actuator', 'include'],
    kind: 'list',
    defaultValue: () => undefined,
    description: 'Endpoint ids the actuator serves (`health`, `diag`, `startup`, `sketches`, or `*`); the server listens only when set',
  },
  {
    property: 'management.endpoints.web.exposure.exclude',
    at: ['actuator', 'exclude'],
    kind: 'list',
    defaultValue: () => [],
    description: 'Endpoint ids never served; exclude wins over include',
  },
  {
    property: 'management.endpoints.web.base-path',
    at: ['actuator', 'basePath'],
    kind: 'basePath',
    defaultValue: () => '/actuator',
    description: 'Path prefix of every actuator endpoint',
  },
  {
    property: 'management.server.port',
    at: ['actuator', 'port'],
    kind: 'port',
    defaultValue: () => 8081,
    description: 'Actuator port (0 = any free port)',
  },
  {
    property: 'management.server.address',
    at: ['actuator', 'address'],
    kind: 'host',
    defaultValue: () => '127.0.0.1',
    description: 'Actuator bind address (loopback by default: bean names are internal information)',
  },
  {
    property: 'management.server.auth-token',
    at: ['actuator', 'authToken'],
    kind: 'string',
    defaultValue: () => undefined,
    description: 'Optional shared secret: requests must send `Authorization: Bearer <token>`',
    secret: true,
  },
  {
    property: 'management.server.auth-token-file',
    at: ['actuator', 'authTokenFile'],
    kind: 'path',
    defaultValue: () => undefined,
    description: 'A file whose content (trailing newline removed) is the auth token, as Kubernetes mounts secrets; read at start',
  },
];

/** `diag.ghost-tracking.enabled` → `DIAG_GHOST_TRACKING_ENABLED`. */
export function envVarName(property: string): string {
  return property.toUpperCase().replace(/[.-]/g, '_');
}

class InvalidValue {
  constructor(readonly reason: string) {}
}


function parseList(raw: unknown): string[] | InvalidValue {
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

function parse(kind: Kind, raw: unknown): unknown {
  switch (kind) {
    case 'boolean': {
      if (typeof raw === 'boolean') return raw;
      const text = String(raw).trim().toLowerCase();
      if (text === 'true') return true;
      if (text === 'false') return false;
      return new InvalidValue('expected true or false');
    }
    case 'list':
      return parseList(raw);
    case 'path': {
      if (typeof raw !== 'string' || raw.trim() === '') return new InvalidValue('expected a non-empty path');
      if (raw.includes('\0')) return new InvalidValue('a path cannot contain a null byte');
      return path.resolve(raw.trim());
    }
    case 'basePath': {
      if (typeof raw !== 'string') return new InvalidValue('expected a path such as /actuator');
      let p = raw.trim();
      if (!p.startsWith('/')) p = `/${p}`;
      p = p.replace(/\/+$/, '');
      if (!/^[A-Za-z0-9\-._~/]*$/.test(p) || p.includes('//')) {
        return new InvalidValue('expected a path of letters, digits, "-", ".", "_", "~" and single "/"');
      }
      return p;
    }
    case 'containers': {
      const list = parseList(raw);
      if (list instanceof InvalidValue) return list;
      const unknown = list.filter((name) => name !== '*' && !CONTAINER_NAMES.includes(name));
      if (unknown.length > 0) return new InvalidValue(`expected * or some of ${CONTAINER_NAMES.join(', ')}; unknown: ${unknown.join(', ')}`);
      return list;
    }
    case 'failMode': {
      const text = String(raw).trim().toLowerCase();
      return text === 'open' || text === 'closed' ? text : new InvalidValue('expected open or closed');
    }
    case 'keyPrefix': {
      if (typeof raw !== 'string' || /[{}\s]/.test(raw)) return new InvalidValue('expected a string without braces or spaces');
      return raw;
    }
    case 'positiveInt':
    case 'port':
    case 'nonNegativeInt': {
      const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : '';
      if (!/^\d+$/.test(text)) return new InvalidValue('expected a whole number');
      const n = Number(text);
      if (kind === 'port' && n > 65535) return new InvalidValue('expected a port from 0 to 65535');
      if (kind === 'positiveInt' && n < 1) return new InvalidValue('expected a whole number of at least 1');
      if (!Number.isSafeInteger(n)) return new InvalidValue('number too large');
      return n;
    }
    case 'host': {
      if (typeof raw !== 'string' || raw.trim() === '' || /[\s/]/.test(raw.trim())) {
        return new InvalidValue('expected a host name or IP address');
      }
      return raw.trim();
    }
    case 'string': {
      if (typeof raw !== 'string' || raw === '') return new InvalidValue('expected a non-empty string');
      return raw;
    }
  }
}

function describe(raw: unknown): string {
  if (typeof raw === 'string') return JSON.stringify(raw);
  try {
    return JSON.stringify(raw) ?? String(raw);
  } catch {
    return String(raw);
  }
}

/**
 * Resolves the configuration from options and the environment. Problems are reported through `warn`
 * (the package logger by default) and never thrown.
 */
export function resolveConfig(
  options: DiagOptions = {},
  env: NodeJS.ProcessEnv = process.env,
  warn: (message: string) => void = (m) => safeLog('warn', m),
): DiagConfig {
  const groups = resolveProperties(PROPERTIES, options, env, warn);
  const actuator = groups.actuator;
  if (Array.isArray(actuator.include)) actuator.include = actuator.include.map((id: string) => id.toLowerCase());
  if (Array.isArray(actuator.exclude)) actuator.exclude = actuator.exclude.map((id: string) => id.toLowerCase());
  return deepFreeze(groups) as unknown as DiagConfig;
}

/**
 * The `diag.sketch.redis.*` settings alone, for the process-wide sketch registry, which the sketch entry point
 * creates without the instrumentation.
 */
export function resolveSketchRedisConfig(
  options: DiagOptions = {},
  env: NodeJS.ProcessEnv = process.env,
  warn: (message: string) => void = (m) => safeLog('warn', m),
): DiagConfig['sketchRedis'] {
  const defs = PROPERTIES.filter((d) => d.at[0] === 'sketchRedis');
  return deepFreeze(resolveProperties(defs, options, env, warn).sketchRedis) as unknown as DiagConfig['sketchRedis'];
}

function resolveProperties(
  defs: readonly PropertyDef[],
  options: DiagOptions,
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void,
): Record<string, Record<string, unknown>> {
  const groups: Record<string, Record<string, unknown>> = {};
  const optionGroups = (options ?? {}) as Record<string, Record<string, unknown> | undefined>;
  for (const def of defs) {
    const [group, field] = def.at;
    const target = (groups[group] ??= {});
    const envName = envVarName(def.property);
    const envRaw = env[envName];
    let optionGroup: Record<string, unknown> | undefined;
    try {
      optionGroup = optionGroups[group];
    } catch {
      optionGroup = undefined;
    }
    const optionRaw = optionGroup && typeof optionGroup === 'object' ? optionGroup[field] : undefined;

    let value: unknown = def.defaultValue();
    // Options first, then the environment on top of them: env wins. Most properties have neither.
    if (optionRaw !== undefined) value = overlay(def, value, optionRaw, () => `option ${group}.${field}`, warn);
    if (envRaw !== undefined) value = overlay(def, value, envRaw, () => `environment variable ${envName}`, warn);
    target[field] = value;
  }
  return groups;
}

/** `raw` parsed as `def`'s kind, or `value` kept with a warning naming `source` (a function: named only then). */
function overlay(def: PropertyDef, value: unknown, raw: unknown, source: () => string, warn: (message: string) => void): unknown {
  const parsed = parse(def.kind, raw);
  if (!(parsed instanceof InvalidValue)) return parsed;
  const shown = def.secret ? 'the value (not shown: it may hold a secret)' : describe(raw);
  warn(`ignoring ${source()} for ${def.property}: ${shown} is not valid (${parsed.reason}); using ${def.secret ? 'the default' : describe(value)}`);
  return value;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
