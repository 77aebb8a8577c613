import { envVarName, type PropertyDef } from '../shared/settings';

/*
 * The configuration table of docs/configuration.md, rendered from the settings table so that the two cannot
 * disagree: `npm run docs:settings` writes it between the file's markers, and
 * test/unit/config/settings-doc.test.ts fails when they differ. Nothing at run time loads this file.
 */

/** The file that holds the table, relative to the package's root (the README links to it). */
export const SETTINGS_DOC = 'docs/configuration.md';

export const SETTINGS_TABLE_START =
  '<!-- settings:start (generated from src/config/properties.ts: npm run docs:settings) -->';
export const SETTINGS_TABLE_END = '<!-- settings:end -->';

/** The default as a reader wants it: `false`, `*`, empty, not set, or the setting's own words. */
function shownDefault(def: PropertyDef): string {
  if (def.shownDefault !== undefined) return def.shownDefault;
  const value = def.defaultValue();
  if (value === undefined) return 'not set';
  if (Array.isArray(value)) return value.length === 0 ? 'empty' : value.map((item) => `\`${String(item)}\``).join(', ');
  return `\`${String(value)}\``;
}

const cell = (text: string): string => text.replace(/\|/g, '\\|');

/**
 * The Markdown table of `properties`, one row per setting, with a trailing newline. A description's links are
 * relative to {@link SETTINGS_DOC}'s folder.
 */
export function settingsTable(properties: readonly PropertyDef[]): string {
  const rows = properties.map((def) =>
    [
      `\`${def.property}\``,
      `\`${def.at.join('.')}\``,
      `\`${envVarName(def.property)}\``,
      shownDefault(def),
      def.description,
    ].map(cell),
  );
  return (
    [
      '| Property | Option | Environment variable | Default | Meaning |',
      '|---|---|---|---|---|',
      ...rows.map((row) => `| ${row.join(' | ')} |`),
    ].join('\n') + '\n'
  );
}

/** `doc` with the text between the markers replaced by `table`; throws when a marker is missing. */
export function withSettingsTable(doc: string, table: string): string {
  const start = doc.indexOf(SETTINGS_TABLE_START);
  const end = doc.indexOf(SETTINGS_TABLE_END);
  if (start < 0 || end < start)
    throw new Error(`${SETTINGS_DOC} lacks the markers ${SETTINGS_TABLE_START} … ${SETTINGS_TABLE_END}`);
  return `${doc.slice(0, start + SETTINGS_TABLE_START.length)}\n${table}${doc.slice(end)}`;
}
