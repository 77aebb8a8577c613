import { safeLog } from '../shared/logger';
import {
  deepFreeze,
  propertiesOf,
  resolveSettings,
  setting,
  type OptionsOf,
  type PropertyDef,
  type SettingsOf,
} from '../shared/settings';
import {
  BASE_PATH,
  BOOLEAN,
  FRACTION,
  HOST,
  LIST,
  NON_NEGATIVE_INT,
  NON_NEGATIVE_NUMBER,
  PATH,
  PORT,
  POSITIVE_INT,
  SECOND_OR_MORE_MS,
  oneOf,
  someOf,
  STRING,
} from '../shared/setting-types';
import { CONTAINER_NAMES } from '../adapters/registry';
import { SKETCH_SETTINGS } from '../sketch/settings';

export { envVarName, type PropertyDef } from '../shared/settings';

/*
 * The settings of the whole package: the instrumentation's own (ghost detector, containers, reports,
 * telemetry, actuator), declared here, and the ones a product declares beside its code (the sketches'
 * `diag.sketch.redis.*`, src/sketch/settings.ts), assembled into one table. Everything else derives from
 * it: the DiagConfig and DiagOptions types, PROPERTIES, and the configuration table of docs/configuration.md
 * (`npm run docs:settings`, checked by test/unit/config/settings-doc.test.ts).
 */

/** The ghost detector's settings. Each field's JSDoc is what the DiagConfig and DiagOptions fields show. */
const GHOST_SETTINGS = {
  ghostTracking: {
    /** `diag.ghost-tracking.enabled`: turns on Phase 2 (first-touch tracking). */
    enabled: setting({
      property: 'diag.ghost-tracking.enabled',
      type: BOOLEAN,
      defaultValue: () => false,
      description: 'Turns on Phase 2 (first-touch tracking)',
    }),
    /** `diag.ghost-tracking.exclude`: bean names never wrapped, reported as `excluded`. */
    exclude: setting({
      property: 'diag.ghost-tracking.exclude',
      type: LIST,
      defaultValue: (): readonly string[] => [],
      description: 'Bean names never wrapped; reported as `excluded`',
    }),
    /**
     * `diag.ghost-tracking.last-use-resolution-ms`: how finely a bean's last use is known. Once per period a
     * long-running process re-arms the first-touch wrappers of the beans it saw touched, so that a use in each
     * period says "still used" at the cost of one wrapped call per bean per period (docs/benchmarks.md). A day by
     * default: the verdicts' window is days, and a finer period only costs more re-arms.
     */
    lastUseResolutionMs: setting({
      property: 'diag.ghost-tracking.last-use-resolution-ms',
      type: SECOND_OR_MORE_MS,
      defaultValue: () => 86_400_000,
      description:
        'How finely last use is known: once per period the wrappers of touched beans are put back, so a use in each period says "still used" (one day by default; one second at least)',
    }),
    /**
     * `diag.ghost-tracking.depth`: `method` (each method of a tracked bean has its own first touch and verdict)
     * or `bean` (only the bean's first call of any method).
     */
    depth: setting({
      property: 'diag.ghost-tracking.depth',
      type: oneOf('depth', ['method', 'bean'] as const),
      defaultValue: (): 'method' | 'bean' => 'method',
      description:
        "`method`: each method of a tracked bean has its own first touch and verdict, and endpoints take their handler method's; `bean`: only the first call of any method",
    }),
    /**
     * `diag.ghost-tracking.kept`: methods and endpoints rare on purpose, `pattern=reason` (`Bean#method`, a route,
     * `kind:route`, a GraphQL field with its API's path; `*` matches anything): shown with their reason, never a finding.
     */
    kept: setting({
      property: 'diag.ghost-tracking.kept',
      type: LIST,
      defaultValue: (): readonly string[] => [],
      description:
        'Methods and endpoints rare on purpose, as `pattern=reason` (`Bean#method`, a route such as `GET /webhooks/*`, or `kind:route`; a GraphQL field also by its API, `/shop-api Query.product`; `*` matches anything): shown with their reason, never a finding',
    }),
  },
  /*
   * The defaults: fourteen days cover two weekly cycles (a weekly report, a weekend batch or a fortnightly job
   * touches its beans inside them); 168 process-hours is one replica observed for a week, or a fleet of 24 for
   * seven hours: enough that a canary restarted every few minutes over those days makes no verdict alone.
   */
  ledger: {
    /**
     * `diag.ghost-tracking.ledger.url`: the Redis where every replica, restart and deploy of the service meet
     * (src/ghost/ledger/); unset = each process judges on its own run. Never logged with its password.
     */
    url: setting({
      property: 'diag.ghost-tracking.ledger.url',
      type: STRING,
      defaultValue: () => undefined,
      description:
        '`redis://[user:password@]host:port[/db]` or `rediss://` URL of the ghost ledger, where the touches of every replica, restart and deploy meet ([the ledger](ledger.md)); never logged with its password',
      secret: true,
    }),
    /**
     * `diag.ghost-tracking.ledger.service`: the service this process speaks for in the ledger. Default: the
     * OpenTelemetry resource's `service.name` (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, the SDK's resource).
     */
    service: setting({
      property: 'diag.ghost-tracking.ledger.service',
      type: STRING,
      defaultValue: () => undefined,
      shownDefault: "the resource's `service.name`",
      description:
        'The service this process speaks for in the ledger; without one (and no `service.name`), a WARN and the ledger off',
    }),
    /**
     * `diag.ghost-tracking.ledger.retention-days`: a version no live process has run for this long is pruned
     * with the beans only it had (fractions allowed).
     */
    retentionDays: setting({
      property: 'diag.ghost-tracking.ledger.retention-days',
      type: NON_NEGATIVE_NUMBER,
      defaultValue: () => 30,
      description:
        'Days a version no live process runs any more is kept (its `retired` beans with it) before it is pruned (fractions allowed)',
    }),
    /** `diag.ghost-tracking.ledger.push-interval-ms`: at most one round of new first touches this often. */
    pushIntervalMs: setting({
      property: 'diag.ghost-tracking.ledger.push-interval-ms',
      type: POSITIVE_INT,
      defaultValue: () => 5_000,
      description:
        'New first touches are pushed in one round at most this often; a process killed with SIGKILL loses at most this much',
    }),
    /** `diag.ghost-tracking.ledger.heartbeat-interval-ms`: how often a process says it is alive and counts its hours. */
    heartbeatIntervalMs: setting({
      property: 'diag.ghost-tracking.ledger.heartbeat-interval-ms',
      type: POSITIVE_INT,
      defaultValue: () => 60_000,
      description:
        'How often each process refreshes its heartbeat and adds its observed process-hours; one missing for three intervals counts it gone',
    }),
    /**
     * `diag.ghost-tracking.ledger.min-days`: days since a bean first appeared before "never called" becomes the
     * verdict `never-touched` (fractions allowed). Two weekly cycles by default (src/ghost/verdicts.ts).
     */
    minDays: setting({
      property: 'diag.ghost-tracking.ledger.min-days',
      type: NON_NEGATIVE_NUMBER,
      defaultValue: () => 14,
      description:
        'Days a never-called bean must have existed before its verdict is `never-touched` (fractions allowed)',
    }),
    /**
     * `diag.ghost-tracking.ledger.min-process-hours`: hours of tracking, summed over the processes that had the
     * bean, before "never called" becomes `never-touched` (fractions allowed). One replica-week by default.
     */
    minProcessHours: setting({
      property: 'diag.ghost-tracking.ledger.min-process-hours',
      type: NON_NEGATIVE_NUMBER,
      defaultValue: () => 168,
      description:
        'Process-hours of tracking a never-called bean needs before its verdict is `never-touched` (fractions allowed)',
    }),
    /**
     * `diag.ghost-tracking.ledger.min-tracked-share`: the share of a bean's processes that must have tracked it
     * (Phase 2 on) before "never called" may become `never-touched`: a call on an untracked process is unseen. 1
     * by default (every process); a canary-only setup states its canary's share here (docs/ledger.md).
     */
    minTrackedShare: setting({
      property: 'diag.ghost-tracking.ledger.min-tracked-share',
      type: FRACTION,
      defaultValue: () => 1,
      description:
        'Share (0 to 1) of the processes that had a bean which must have tracked it before its verdict may be `never-touched`; calls on untracked processes are unseen',
    }),
  },
  containers: {
    /**
     * `diag.containers.include`: the dependency-injection frameworks whose adapter hooks them when they load:
     * `*` (default: every one the process loads) or some of the names in src/adapters/registry.ts
     * (`nestjs`, `inversify`, `tsyringe`, `awilix`).
     */
    include: setting({
      property: 'diag.containers.include',
      type: someOf('containers', CONTAINER_NAMES),
      defaultValue: (): readonly string[] => ['*'],
      description: `Which containers are hooked when they load: \`*\`, or some of ${CONTAINER_NAMES.map((n) => `\`${n}\``).join(', ')} (another name: a warning, and \`*\`)`,
    }),
  },
  report: {
    /** `diag.report.dir`: absolute directory both report files are written to. */
    dir: setting({
      property: 'diag.report.dir',
      type: PATH,
      defaultValue: () => process.cwd(),
      shownDefault: 'current directory',
      description: 'Where both report files are written (created if missing)',
    }),
    /** `diag.report.flush-interval-ms`: how often the ghost report is rewritten while the app runs (0 = never). */
    flushIntervalMs: setting({
      property: 'diag.report.flush-interval-ms',
      type: NON_NEGATIVE_INT,
      defaultValue: () => 30_000,
      description:
        'Periodic rewrite of the ghost report, so a crash leaves a recent one (0 = only at close and at the end of the process)',
    }),
    /** `diag.report.run-id`: processes with the same run id merge their ghost reports (default: see defaultRunId). */
    runId: setting({
      property: 'diag.report.run-id',
      type: STRING,
      defaultValue: () => undefined,
      shownDefault: 'see below',
      description: 'Processes with the same run id merge their ghost reports',
    }),
  },
  telemetry: {
    /** `diag.telemetry.bean-spans`: one child span per bean instantiation under the start-up span. */
    beanSpans: setting({
      property: 'diag.telemetry.bean-spans',
      type: BOOLEAN,
      defaultValue: () => true,
      description: 'One child span per bean instantiation under the container start-up span',
    }),
  },
} as const;

/** The actuator's settings (`management.*`, Spring Boot's names). */
const ACTUATOR_SETTINGS = {
  actuator: {
    /** `management.endpoints.web.exposure.include`: exposed endpoint ids (lower-cased), `*` for all; unset = no server. */
    include: setting({
      property: 'management.endpoints.web.exposure.include',
      type: LIST,
      defaultValue: () => undefined,
      description:
        'Endpoint ids served (`health`, `diag`, `startup`, `sketches`, `*`); the actuator listens only when set',
    }),
    /** `management.endpoints.web.exposure.exclude`: ids never exposed; exclude wins over include. */
    exclude: setting({
      property: 'management.endpoints.web.exposure.exclude',
      type: LIST,
      defaultValue: (): readonly string[] => [],
      description: 'Endpoint ids never served; exclude wins over include',
    }),
    /** `management.endpoints.web.base-path` */
    basePath: setting({
      property: 'management.endpoints.web.base-path',
      type: BASE_PATH,
      defaultValue: () => '/actuator',
      description: 'Path prefix of every actuator endpoint',
    }),
    /** `management.server.port` (0 = any free port) */
    port: setting({
      property: 'management.server.port',
      type: PORT,
      defaultValue: () => 8081,
      description: 'Actuator port (0 = any free port, logged)',
    }),
    /** `management.server.address` */
    address: setting({
      property: 'management.server.address',
      type: HOST,
      defaultValue: () => '127.0.0.1',
      description: 'Actuator bind address; bean names are internal information: loopback by default',
    }),
    /** `management.server.auth-token`: when set, every request needs `Authorization: Bearer <token>`. */
    authToken: setting({
      property: 'management.server.auth-token',
      type: STRING,
      defaultValue: () => undefined,
      description: 'Requests must send `Authorization: Bearer <token>` (constant-time compare)',
      secret: true,
    }),
    /** `management.server.auth-token-file`: a file holding the token (a mounted Kubernetes secret, say). */
    authTokenFile: setting({
      property: 'management.server.auth-token-file',
      type: PATH,
      defaultValue: () => undefined,
      description:
        'The token read from a file (a mounted Kubernetes secret, trailing newline removed), so it need not sit in the environment; read at start; unreadable or empty: the actuator does not start',
    }),
  },
} as const;

/** Every setting of the package, in the order of docs/configuration.md's table. */
const DIAG_SETTINGS = { ...GHOST_SETTINGS, ...SKETCH_SETTINGS, ...ACTUATOR_SETTINGS };

/**
 * The validated configuration everything else receives: one field per setting, grouped as the options are.
 * Resolved once (environment over options over defaults), then read-only. `sketchRedis` is declared by the
 * sketches (src/sketch/settings.ts), which read it.
 */
export interface DiagConfig
  extends SettingsOf<typeof GHOST_SETTINGS>, SettingsOf<typeof SKETCH_SETTINGS>, SettingsOf<typeof ACTUATOR_SETTINGS> {}

/**
 * Constructor options: every group and field optional, named as DiagConfig's. A list may be an array or a
 * comma-separated string. An environment variable, when set, wins over the option (see PROPERTIES).
 */
export interface DiagOptions
  extends OptionsOf<typeof GHOST_SETTINGS>, OptionsOf<typeof SKETCH_SETTINGS>, OptionsOf<typeof ACTUATOR_SETTINGS> {}

/**
 * Every setting, in the order of docs/configuration.md's table: property name, where it sits in DiagOptions / DiagConfig (`at`), the
 * kind of value, its default and a description. The environment variable is `envVarName(property)`.
 */
export const PROPERTIES: readonly PropertyDef[] = propertiesOf(DIAG_SETTINGS);

/**
 * Resolves the configuration from options and the environment. Problems are reported through `warn`
 * (the package logger by default) and never thrown.
 */
export function resolveConfig(
  options: DiagOptions = {},
  env: NodeJS.ProcessEnv = process.env,
  warn: (message: string) => void = (m) => safeLog('warn', m),
): DiagConfig {
  const groups = resolveSettings(DIAG_SETTINGS, options, env, warn);
  const actuator = groups.actuator;
  // endpoint ids compare ignoring case (SPEC 2)
  if (Array.isArray(actuator.include)) actuator.include = actuator.include.map((id: string) => id.toLowerCase());
  if (Array.isArray(actuator.exclude)) actuator.exclude = actuator.exclude.map((id: string) => id.toLowerCase());
  return deepFreeze(groups);
}
