/**
 * The configuration table of docs/configuration.md is generated from the settings table (`npm run docs:settings`):
 * this fails when someone changes one without the other.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PROPERTIES } from '../../../src/config/properties';
import { SETTINGS_DOC, settingsTable, withSettingsTable } from '../../../src/config/settings-doc';

describe(`the configuration table of ${SETTINGS_DOC}`, () => {
  it('is the settings table (npm run docs:settings rewrites it)', () => {
    const doc = fs.readFileSync(path.resolve(__dirname, '..', '..', '..', SETTINGS_DOC), 'utf8');
    expect(doc).toBe(withSettingsTable(doc, settingsTable(PROPERTIES)));
  });

  it('has one row per setting, each with its environment variable', () => {
    const table = settingsTable(PROPERTIES);
    expect(table.trim().split('\n')).toHaveLength(PROPERTIES.length + 2);
    expect(table).toContain('| `management.server.port` | `actuator.port` | `MANAGEMENT_SERVER_PORT` | `8081` |');
    expect(table).toContain('| `diag.report.dir` | `report.dir` | `DIAG_REPORT_DIR` | current directory |');
  });
});
