#!/usr/bin/env node
/*
 * Writes the README's configuration table from the settings table (run through `npm run docs:settings`,
 * which builds dist/ first). test/unit/config/readme-table.test.ts fails until the README says what the table says.
 */
const fs = require('node:fs');
const path = require('node:path');
const { PROPERTIES } = require('../dist/config/properties');
const { settingsTable, withSettingsTable } = require('../dist/config/readme-table');

const file = path.resolve(__dirname, '..', 'README.md');
const before = fs.readFileSync(file, 'utf8');
const after = withSettingsTable(before, settingsTable(PROPERTIES));
if (after === before) {
  console.log('README.md: the configuration table is up to date');
} else {
  fs.writeFileSync(file, after);
  console.log('README.md: configuration table rewritten from src/config/properties.ts');
}
