/**
 * The README's configuration table is generated from the settings table (`npm run docs:settings`): this fails
 * when someone changes one without the other.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PROPERTIES } from '../../../src/config/properties';
import { settingsTable, withSettingsTable } from '../../../src/config/readme-table';

describe("the README's configuration table", () => {
  it('is the settings table (npm run docs:settings rewrites it)', () => {
    const readme = fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'README.md'), 'utf8');
    expect(readme).toBe(withSettingsTable(readme, settingsTable(PROPERTIES)));
  });

  it('has one row per setting, each with its environment variable', () => {
    const table = settingsTable(PROPERTIES);
    expect(table.trim().split('\n')).toHaveLength(PROPERTIES.length + 2);
    expect(table).toContain('| `management.server.port` | `actuator.port` | `MANAGEMENT_SERVER_PORT` | `8081` |');
    expect(table).toContain('| `diag.report.dir` | `report.dir` | `DIAG_REPORT_DIR` | current directory |');
  });
});
