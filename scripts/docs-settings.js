#!/usr/bin/env node
/*
 * Writes the configuration table of docs/configuration.md from the settings table (run through
 * `npm run docs:settings`, which builds dist/ first). test/unit/config/settings-doc.test.ts fails until the file
 * says what the table says.
 */
const fs = require('node:fs');
const path = require('node:path');
const { PROPERTIES } = require('../dist/config/properties');
const { SETTINGS_DOC, settingsTable, withSettingsTable } = require('../dist/config/settings-doc');

const file = path.resolve(__dirname, '..', SETTINGS_DOC);
const before = fs.readFileSync(file, 'utf8');
const after = withSettingsTable(before, settingsTable(PROPERTIES));
if (after === before) {
  console.log(`${SETTINGS_DOC}: the configuration table is up to date`);
} else {
  fs.writeFileSync(file, after);
  console.log(`${SETTINGS_DOC}: configuration table rewritten from src/config/properties.ts`);
}
