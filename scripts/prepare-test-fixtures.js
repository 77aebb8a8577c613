'use strict';
// Jest globalSetup (also runnable by hand): everything the end-to-end tests start as real node processes
// must exist as JavaScript first — the package's dist/ and the fixture apps.
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

function run(cmd, args, cwd = root) {
  execFileSync(cmd, args, { cwd, stdio: 'inherit' });
}

function tsc(project) {
  run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', project]);
}

module.exports = async function prepare() {
  // Lets one developer run a unit test while another's half-written module would fail the build.
  if (process.env.DIAG_SKIP_PREPARE === '1') return;
  tsc(path.join(root, 'tsconfig.build.json'));
};

if (require.main === module) module.exports();
