/*
 * The machinery every product's settings share. A product declares its settings in one `const` table
 * (group → field → Setting); from that table come the resolved settings' type (SettingsOf), the options' type
 * (OptionsOf), the flat list of properties (propertiesOf) and the resolution itself (resolveSettings). Every
 * setting has three spellings: a Spring-style property name, a field of the options (`group.field`) and an
 * environment variable derived from the property name. Precedence: environment, then options, then default.
 * A malformed value is a warning and the layer below it: settings never throw into the host application.
 */

/** Why a raw value was refused: the warning quotes it. */
export class InvalidValue {
  constructor(readonly reason: string) {}
}

/**
 * How a setting's raw value (an option as given, or an environment variable's text) is read. `Value` is what
 * the product receives, `Option` what the options' field accepts.
 */
export interface SettingType<Value, Option = Value> {
  /** What `PROPERTIES` calls it (`boolean`, `port`, …). */
  readonly kind: string;
  parse(raw: unknown): Value | InvalidValue;
  /** Never set: carries the options' type for OptionsOf. */
  readonly option?: Option;
}

/** One setting of a product's table. */
export interface Setting<Value = unknown, Option = unknown, Default extends Value | undefined = Value | undefined> {
  /** Spring-style name, as in the SPEC (`diag.ghost-tracking.enabled`). */
  readonly property: string;
  readonly type: SettingType<Value, Option>;
  /** A function: some defaults are read when resolved (the current directory). */
  readonly defaultValue: () => Default;
  /** One line for the table of docs/configuration.md and the API docs. */
  readonly description: string;
  /** The default as the table of docs/configuration.md shows it, when the value itself would not say it (`current directory`). */
  readonly shownDefault?: string;
  /** May hold a secret (a password in a URL): a warning about it never quotes the value. */
  readonly secret?: boolean;
}

/** A product's settings: group (an options field) → field → setting. */
export type SettingsTable = {
  readonly [group: string]: { readonly [field: string]: Setting<unknown, unknown, unknown> };
};

/** Declares one setting, keeping its value, option and default types for SettingsOf and OptionsOf. */
export function setting<Value, Option, Default extends Value | undefined>(
  def: Setting<Value, Option, Default>,
): Setting<Value, Option, Default> {
  return def;
}

/** A setting's resolved value: its type's value, or undefined when its default is. */
export type ValueOf<S> =
  S extends Setting<infer Value, unknown, infer Default>
    ? Value | (undefined extends Default ? undefined : never)
    : never;
/** What the options may give for a setting. */
export type OptionOf<S> = S extends Setting<unknown, infer Option, unknown> ? Option : never;

/** The resolved settings of a table: every group and field present, read-only. */
export type SettingsOf<T extends SettingsTable> = {
  readonly [G in keyof T]: { readonly [F in keyof T[G]]: ValueOf<T[G][F]> };
};
/** The options of a table: every group and field optional. */
export type OptionsOf<T extends SettingsTable> = { [G in keyof T]?: { [F in keyof T[G]]?: OptionOf<T[G][F]> } };

/** One setting with where it sits: what `PROPERTIES` lists. */
export interface PropertyDef {
  /** Spring-style name, as in the SPEC. */
  readonly property: string;
  /** Where the value sits in the options and the resolved settings: [group, field]. */
  readonly at: readonly [string, string];
  readonly kind: string;
  readonly defaultValue: () => unknown;
  readonly description: string;
  readonly shownDefault?: string;
  readonly secret?: boolean;
}

/** The table's settings in order, each with its place. */
export function propertiesOf(table: SettingsTable): PropertyDef[] {
  return Object.entries(table).flatMap(([group, fields]) =>
    Object.entries(fields).map(([field, s]): PropertyDef => ({
      property: s.property,
      at: [group, field],
      kind: s.type.kind,
      defaultValue: s.defaultValue,
      description: s.description,
      ...(s.shownDefault !== undefined ? { shownDefault: s.shownDefault } : {}),
      ...(s.secret ? { secret: true } : {}),
    })),
  );
}

/** `diag.ghost-tracking.enabled` → `DIAG_GHOST_TRACKING_ENABLED`. */
export function envVarName(property: string): string {
  return property.toUpperCase().replace(/[.-]/g, '_');
}

/**
 * The settings of `table`, from options and the environment, grouped as the table is; not frozen (a product
 * may normalise a value first: see deepFreeze). Problems are reported through `warn`, never thrown.
 */
export function resolveSettings<T extends SettingsTable>(
  table: T,
  options: OptionsOf<T> | undefined,
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void,
): { -readonly [G in keyof T]: { -readonly [F in keyof T[G]]: ValueOf<T[G][F]> } } {
  const groups: Record<string, Record<string, unknown>> = {};
  const optionGroups = (options ?? {}) as Record<string, Record<string, unknown> | undefined>;
  for (const [group, fields] of Object.entries(table)) {
    const target = (groups[group] = {} as Record<string, unknown>);
    let optionGroup: Record<string, unknown> | undefined;
    try {
      optionGroup = optionGroups[group];
    } catch {
      optionGroup = undefined;
    }
    for (const [field, def] of Object.entries(fields)) {
      const envName = envVarName(def.property);
      const envRaw = env[envName];
      const optionRaw = optionGroup && typeof optionGroup === 'object' ? optionGroup[field] : undefined;
      let value: unknown = def.defaultValue();
      // Options first, then the environment on top of them: env wins. Most properties have neither.
      if (optionRaw !== undefined) value = overlay(def, value, optionRaw, () => `option ${group}.${field}`, warn);
      if (envRaw !== undefined) value = overlay(def, value, envRaw, () => `environment variable ${envName}`, warn);
      target[field] = value;
    }
  }
  return groups as ReturnType<typeof resolveSettings<T>>;
}

/** `raw` parsed as `def`'s type, or `value` kept with a warning naming `source` (a function: named only then). */
function overlay(
  def: Setting,
  value: unknown,
  raw: unknown,
  source: () => string,
  warn: (message: string) => void,
): unknown {
  const parsed = def.type.parse(raw);
  if (!(parsed instanceof InvalidValue)) return parsed;
  const shown = def.secret ? 'the value (not shown: it may hold a secret)' : describe(raw);
  warn(
    `ignoring ${source()} for ${def.property}: ${shown} is not valid (${parsed.reason}); using ${def.secret ? 'the default' : describe(value)}`,
  );
  return value;
}

function describe(raw: unknown): string {
  if (typeof raw === 'string') return JSON.stringify(raw);
  try {
    return JSON.stringify(raw) ?? String(raw);
  } catch {
    return String(raw);
  }
}

/** Freezes `value` and everything in it: resolved settings are read-only. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
