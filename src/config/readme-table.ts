import { envVarName, type PropertyDef } from '../shared/settings';

/*
 * The README's configuration table, rendered from the settings table so that the two cannot disagree:
 * `npm run docs:settings` writes it between the README's markers, and test/unit/config/readme-table.test.ts
 * fails when they differ. Nothing at run time loads this file.
 */

export const README_TABLE_START =
  '<!-- settings:start (generated from src/config/properties.ts: npm run docs:settings) -->';
export const README_TABLE_END = '<!-- settings:end -->';

/** The default as a reader wants it: `false`, `*`, empty, not set, or the setting's own words. */
function shownDefault(def: PropertyDef): string {
  if (def.shownDefault !== undefined) return def.shownDefault;
  const value = def.defaultValue();
  if (value === undefined) return 'not set';
  if (Array.isArray(value)) return value.length === 0 ? 'empty' : value.map((item) => `\`${String(item)}\``).join(', ');
  return `\`${String(value)}\``;
}

const cell = (text: string): string => text.replace(/\|/g, '\\|');

/** The Markdown table of `properties`, one row per setting, with a trailing newline. */
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

/** `readme` with the text between the markers replaced by `table`; throws when a marker is missing. */
export function withSettingsTable(readme: string, table: string): string {
  const start = readme.indexOf(README_TABLE_START);
  const end = readme.indexOf(README_TABLE_END);
  if (start < 0 || end < start)
    throw new Error(`README.md lacks the markers ${README_TABLE_START} … ${README_TABLE_END}`);
  return `${readme.slice(0, start + README_TABLE_START.length)}\n${table}${readme.slice(end)}`;
}
