'use strict';
// The precision corpus (test/fixtures/apps/precision-app) through nestjs-doctor, the static analyser users
// compare us with: its "unused provider" findings scored against the corpus's truth, for docs/precision.md.
// Needs the npm registry (installs the pinned version into a temporary directory); not part of `npm test`.
//
//   node bench/precision/nestjs-doctor.js [--version 0.4.30]
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const corpus = path.join(root, 'test', 'fixtures', 'apps', 'precision-app');
const i = process.argv.indexOf('--version');
const version = i > 0 ? process.argv[i + 1] : '0.4.30';

// The truth names beans by token; a static tool names the class. These are the corpus's token ← class pairs.
const TOKEN_OF_CLASS = { StripeGateway: 'PaymentGateway', PaypalRefunds: 'RefundGateway' };

function truth() {
  const src = fs.readFileSync(path.join(corpus, 'truth.ts'), 'utf8');
  const block = /TRULY_DEAD[^=]*=\s*\[([\s\S]*?)\];/.exec(src)[1];
  return [...block.matchAll(/'([^']+)'/g)].map((m) => m[1]);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-nestjs-doctor-'));
try {
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent', `nestjs-doctor@${version}`], {
    cwd: dir,
    stdio: 'ignore',
  });
  const project = path.join(dir, 'project');
  fs.mkdirSync(path.join(project, 'src'), { recursive: true });
  for (const f of fs.readdirSync(corpus)) fs.copyFileSync(path.join(corpus, f), path.join(project, 'src', f));
  fs.writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'corpus', dependencies: { '@nestjs/common': '^11', '@nestjs/core': '^11' } }),
  );
  fs.writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { experimentalDecorators: true, emitDecoratorMetadata: true } }),
  );
  let out;
  try {
    out = execFileSync(path.join(dir, 'node_modules', '.bin', 'nestjs-doctor'), ['--json', project], {
      encoding: 'utf8',
    });
  } catch (err) {
    out = err.stdout; // a low score exits non-zero
  }
  const diagnostics = JSON.parse(out).diagnostics;
  const found = diagnostics
    .filter((d) => d.rule === 'performance/no-unused-providers')
    .map((d) => /Provider '([^']+)'/.exec(d.message)[1])
    .map((cls) => TOKEN_OF_CLASS[cls] ?? cls);
  const dead = truth();
  const hits = found.filter((n) => dead.includes(n));
  const result = {
    tool: `nestjs-doctor ${version}`,
    findings: found,
    precision: found.length ? hits.length / found.length : 1,
    recall: hits.length / dead.length,
    falsePositives: found.filter((n) => !dead.includes(n)),
    missed: dead.filter((n) => !found.includes(n)),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
