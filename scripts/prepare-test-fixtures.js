'use strict';
// Jest globalSetup (also runnable by hand: `node scripts/prepare-test-fixtures.js`): everything the
// end-to-end tests start as real node processes must exist as JavaScript first — the package's dist/, the
// NestJS 12 fixture's own node_modules, and the fixture apps compiled once per loading case.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const fixtures = path.join(root, 'test', 'fixtures');

function run(cmd, args, cwd = root) {
  execFileSync(cmd, args, { cwd, stdio: 'inherit' });
}

function tsc(args) {
  run(process.execPath, [require.resolve('typescript/bin/tsc'), ...args]);
}

/**
 * NestJS 12 lives in its own folder so that the root can keep NestJS 11, and so do the other majors of the
 * containers (OTHER_MAJORS): apps compiled under a folder load its packages first.
 */
function installFolder(name) {
  const dir = path.join(fixtures, name);
  const stamp = path.join(dir, 'node_modules', '.package-lock.json');
  const lock = path.join(dir, 'package-lock.json');
  if (fs.existsSync(stamp) && fs.statSync(stamp).mtimeMs >= fs.statSync(lock).mtimeMs) return;
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  run(npm, ['ci', '--no-audit', '--no-fund', '--loglevel=error'], dir);
}

/**
 * Fixture packages (test/fixtures/packages) are copied, not linked, into the node_modules of each NestJS folder
 * the apps are compiled under: a symlink would resolve to a path outside node_modules, and the tests are about
 * classes that really come from a package. (nest11 is the root's NestJS; its folder holds only these.)
 */
function installFixturePackages() {
  const source = path.join(fixtures, 'packages');
  for (const folder of ['nest11', 'nest12']) {
    const modules = path.join(fixtures, folder, 'node_modules');
    for (const name of fs.readdirSync(source)) {
      const target = path.join(modules, name);
      fs.rmSync(target, { recursive: true, force: true });
      fs.cpSync(path.join(source, name), target, { recursive: true });
    }
  }
}

/** The same app sources, compiled for each loading case the tests start. */
const TARGETS = [
  { out: 'nest11/out-cjs', format: 'cjs', type: 'commonjs' },
  { out: 'nest12/out-cjs', format: 'cjs', type: 'commonjs' },
  { out: 'nest12/out-esm', format: 'esm', type: 'module' },
];

/**
 * Folders of test/fixtures whose node_modules hold another major of a container than the root's, and the
 * example built into each: InversifyJS 6, 7.0 (the oldest 7, on @inversifyjs/core 4), 7.8 (core 7) and 8 (ESM-only)
 * beside the root's 7.11 (core 9), awilix 10, 11 and 12 beside 13; and InversifyJS 5, which no hook supports.
 */
const OTHER_MAJORS = [
  { folder: 'inversify5', example: 'inversify', formats: ['cjs', 'esm'] },
  { folder: 'inversify6', example: 'inversify', formats: ['cjs', 'esm'] },
  { folder: 'inversify7-0', example: 'inversify', formats: ['cjs', 'esm'] },
  { folder: 'inversify7-8', example: 'inversify', formats: ['cjs'] },
  { folder: 'inversify8', example: 'inversify', formats: ['esm'] },
  { folder: 'awilix10', example: 'awilix', formats: ['cjs'] },
  { folder: 'awilix11', example: 'awilix', formats: ['cjs'] },
  { folder: 'awilix12', example: 'awilix', formats: ['cjs', 'esm'] },
];

function buildApps() {
  for (const target of TARGETS) {
    const out = path.join(fixtures, target.out);
    fs.rmSync(out, { recursive: true, force: true });
    tsc(['-p', path.join(fixtures, `tsconfig.${target.format}.json`), '--outDir', out]);
    // The examples are also fixtures: the shop (examples/shop) is the app the ghost tests run against, the
    // container examples (examples/tsyringe, examples/awilix) those the adapters' tests start.
    tsc(['-p', path.join(fixtures, `tsconfig.example.${target.format}.json`), '--outDir', path.join(out, 'ghost-app')]);
    for (const container of ['tsyringe', 'awilix', 'inversify']) {
      tsc([
        '-p',
        path.join(fixtures, `tsconfig.example-${container}.${target.format}.json`),
        '--outDir',
        path.join(out, `${container}-app`),
      ]);
    }
    fs.writeFileSync(path.join(out, 'package.json'), `${JSON.stringify({ type: target.type })}\n`);
  }
  // the container examples once more where they load another major of their container (same sources)
  for (const { folder, example, formats } of OTHER_MAJORS) {
    for (const format of formats) {
      const out = path.join(fixtures, folder, `out-${format}`);
      fs.rmSync(out, { recursive: true, force: true });
      tsc([
        '-p',
        path.join(fixtures, `tsconfig.example-${example}.${format}.json`),
        '--outDir',
        path.join(out, `${example}-app`),
      ]);
      fs.writeFileSync(
        path.join(out, 'package.json'),
        `${JSON.stringify({ type: format === 'esm' ? 'module' : 'commonjs' })}\n`,
      );
    }
  }
  // and its web layer, inversify-express-utils (InversifyJS 6 only), in plain JavaScript
  const utilsApp = path.join(fixtures, 'inversify6', 'out-cjs', 'express-utils-app');
  fs.mkdirSync(utilsApp, { recursive: true });
  fs.copyFileSync(path.join(fixtures, 'inversify6', 'express-utils-app.cjs'), path.join(utilsApp, 'main.js'));
}

/** The package itself: dist/ and the report page's bundle. */
async function buildPackage() {
  tsc(['-p', path.join(root, 'tsconfig.build.json')]);
  tsc(['-p', path.join(root, 'tsconfig.types.json')]);
  await require('./build-page.js')();
}

/**
 * The example shop alone, compiled for NestJS 11 (the root's) as CommonJS into `out`: what `npm run demo` starts.
 * It needs nothing beyond the package's own dependencies.
 */
function buildShop(out) {
  fs.rmSync(out, { recursive: true, force: true });
  tsc(['-p', path.join(fixtures, 'tsconfig.example.cjs.json'), '--outDir', out]);
  fs.writeFileSync(path.join(out, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
}

module.exports = async function prepare() {
  // Lets one developer run a unit test while another's half-written module would fail the build.
  if (process.env.DIAG_SKIP_PREPARE === '1') return;
  await buildPackage();
  installFolder('nest12');
  for (const { folder } of OTHER_MAJORS) installFolder(folder);
  installFixturePackages();
  buildApps();
};

module.exports.buildPackage = buildPackage;
module.exports.buildShop = buildShop;

if (require.main === module) module.exports();
