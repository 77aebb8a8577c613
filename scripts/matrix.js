'use strict';
// `npm run test:matrix`: the end-to-end suites (Phase 1, Phase 2) across supported NestJS × Node ×
// OpenTelemetry JS versions, each cell against the packed tarball installed into a fresh application, as a
// user would install it. Node 22 and 24 come from the npm `node` package. npm's own cache makes reruns fast.
//   node scripts/matrix.js [cell-name ...]
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
// The tarball and each cell's results (read by .ci/run) stay in the repository's .tmp.
const work = path.join(root, '.tmp', 'matrix');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const OTEL = {
  '2.x': {
    '@opentelemetry/api': '1.9.1',
    '@opentelemetry/instrumentation': '0.223.0',
    '@opentelemetry/sdk-node': '0.223.0',
  },
  '3.x': {
    '@opentelemetry/api': '1.10.0',
    '@opentelemetry/instrumentation': '0.301.1',
    '@opentelemetry/sdk-node': '0.301.0',
  },
};
const NEST = {
  10: {
    '@nestjs/common': '10.4.9',
    '@nestjs/core': '10.4.9',
    '@nestjs/platform-express': '10.4.9',
    '@nestjs/schedule': '4.1.2',
    '@nestjs/event-emitter': '2.1.1',
    '@nestjs/passport': '10.0.3',
  },
  11: {
    '@nestjs/common': '11.2.10',
    '@nestjs/core': '11.2.10',
    '@nestjs/platform-express': '11.2.10',
    '@nestjs/schedule': '12.0.2',
    '@nestjs/event-emitter': '12.0.1',
    '@nestjs/passport': '12.0.0',
  },
  12: {
    '@nestjs/common': '12.5.1',
    '@nestjs/core': '12.5.1',
    '@nestjs/platform-express': '12.5.1',
    '@nestjs/schedule': '12.0.2',
    '@nestjs/event-emitter': '12.0.1',
    '@nestjs/passport': '12.0.0',
  },
};
const COMMON = { passport: '0.7.0', 'passport-local': '1.0.0', 'reflect-metadata': '0.2.2', rxjs: '7.8.2' };

/**
 * What each cell runs: the ghost detector's suites and the decorators on a NestJS route (native sketches). Not
 * the GraphQL suite beside it: its app needs the root's @nestjs/graphql, which the cells do not install.
 */
const SUITES = ['test/e2e/phase1.test.ts', 'test/e2e/phase2.test.ts', 'test/e2e/sketch-decorators/decorators.test.ts'];

/** The cells CI runs; the README's "Supported versions" table lists exactly these. */
const CELLS = [
  { name: 'nest10-node20-otel2', nest: 10, node: null, otel: '2.x', cases: ['nest10-cjs'] },
  { name: 'nest11-node22-otel3', nest: 11, node: '22', otel: '3.x', cases: ['nest11-cjs'] },
  { name: 'nest12-node24-otel3', nest: 12, node: '24', otel: '3.x', cases: ['nest12-cjs', 'nest12-esm'] },
];

function run(cmd, args, opts = {}) {
  execFileSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
}

async function pack() {
  // Builds dist/ and the compiled fixture apps the cells copy.
  await require('./prepare-test-fixtures.js')();
  const out = execFileSync(npm, ['pack', '--silent', '--ignore-scripts', '--pack-destination', work], {
    cwd: root,
    encoding: 'utf8',
  });
  return path.join(work, out.trim().split('\n').pop());
}

/**
 * Cells live outside the repository: inside it, a package a cell does not install would resolve from the
 * repository's node_modules (Nest's optional @nestjs/websockets or @nestjs/microservices, then a second
 * @nestjs/core of another version through them), and the cell would no longer be the application it stands for.
 */
function prepareCell(cell, tarball, cellsRoot) {
  const dir = path.join(cellsRoot, cell.name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const dependencies = {
    'diag-instrumentation': `file:${tarball}`,
    ...NEST[cell.nest],
    ...COMMON,
    ...OTEL[cell.otel],
    ...(cell.node ? { node: cell.node } : {}),
  };
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: cell.name, private: true, dependencies }, null, 2),
  );
  run(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir });
  // The compiled fixture apps are plain JS and version-neutral; the CommonJS and ESM builds are copied in so
  // that they resolve NestJS, the SDK and the package from this cell's node_modules.
  const fixtures = path.join(root, 'test', 'fixtures');
  fs.cpSync(path.join(fixtures, 'nest11', 'out-cjs'), path.join(dir, 'out-cjs'), { recursive: true });
  fs.cpSync(path.join(fixtures, 'nest12', 'out-esm'), path.join(dir, 'out-esm'), { recursive: true });
  for (const f of ['telemetry.cjs', 'telemetry.mjs'])
    fs.copyFileSync(path.join(fixtures, 'telemetry', f), path.join(dir, f));
  const nodeBin = cell.node ? path.join(dir, 'node_modules', '.bin', 'node') : process.execPath;
  const version = execFileSync(nodeBin, ['--version'], { encoding: 'utf8' }).trim();
  return { dir, nodeBin, version };
}

async function main() {
  const only = process.argv.slice(2);
  const cells = only.length ? CELLS.filter((c) => only.includes(c.name)) : CELLS;
  fs.mkdirSync(work, { recursive: true });
  const tarball = await pack();
  const cellsRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-matrix-'));
  process.on('exit', () => fs.rmSync(cellsRoot, { recursive: true, force: true }));
  const results = [];
  for (const cell of cells) {
    const started = Date.now();
    let env;
    try {
      const { dir, nodeBin, version } = prepareCell(cell, tarball, cellsRoot);
      console.log(`\n=== ${cell.name}: NestJS ${cell.nest}, Node ${version}, OpenTelemetry JS ${cell.otel} ===`);
      env = {
        ...process.env,
        DIAG_SKIP_PREPARE: '1',
        DIAG_MATRIX_DIR: dir,
        DIAG_MATRIX_NODE: nodeBin,
        DIAG_MATRIX_CASES: cell.cases.join(','),
        DIAG_PACKAGE: 'diag-instrumentation',
      };
    } catch (err) {
      results.push({ cell: cell.name, ok: false, passed: 0, failed: 1, seconds: (Date.now() - started) / 1000 });
      console.error(`${cell.name}: setup failed: ${err.message}`);
      continue;
    }
    const outputFile = path.join(work, `${cell.name}.json`);
    const res = spawnSync(
      process.execPath,
      [require.resolve('jest/bin/jest'), ...SUITES, '--json', `--outputFile=${outputFile}`],
      { cwd: root, env, stdio: 'inherit' },
    );
    let passed = 0;
    let failed = 1;
    try {
      const r = JSON.parse(fs.readFileSync(outputFile, 'utf8'));
      passed = r.numPassedTests;
      failed = r.numFailedTests + (res.status === 0 ? 0 : r.numFailedTests === 0 ? 1 : 0);
    } catch {
      /* jest did not get far enough to write results: counted as one failure */
    }
    results.push({ cell: cell.name, ok: res.status === 0, passed, failed, seconds: (Date.now() - started) / 1000 });
  }
  console.log('\nmatrix summary');
  for (const r of results)
    console.log(
      `  ${r.ok ? 'PASS' : 'FAIL'} ${r.cell}: ${r.passed} passed, ${r.failed} failed (${r.seconds.toFixed(0)} s)`,
    );
  const passed = results.reduce((a, r) => a + r.passed, 0);
  const failed = results.reduce((a, r) => a + r.failed, 0);
  console.log(`matrix: ${passed} passed, ${failed} failed`);
  process.exitCode = results.every((r) => r.ok) ? 0 : 1;
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
