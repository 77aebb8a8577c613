/**
 * Every code block of the README, of the docs written for its guide and of examples/ runs or compiles as written
 * (issue #38), so that the docs cannot drift from the package again. Each block is claimed by exactly one check
 * below; a block no check claims fails, so a new block must say how it is checked.
 *
 * - TypeScript: typechecked, as the file its first line names, against the built package's types (dist/) in a
 *   fresh application, with the compiler settings of a NestJS starter (CommonJS) and of Node's own resolution
 *   (nodenext); a NestJS controller is then compiled and served, and its limit is hit.
 * - The registration blocks (`// telemetry.js`, `.mjs`, `.ts`): run by test/e2e/readme.test.ts, as pasted.
 * - Shell: each command runs in a fresh application (the README's; in the repository for examples/), in order:
 *   `cd` moves, a `node` command is an application started in the background and waited for, every other command
 *   runs in bash and must exit with the code its comment names (`# exit 1 …`), else 0. The only change made to a
 *   command: the fixed ports the docs name (3000, 8081, 9464) become free ones and `<port>` the application's,
 *   since the machine is shared. Commands that cannot run inside a test are listed in NOT_RUN with the reason
 *   and what is checked instead.
 * - A plain block after a shell block is its output: each line's leading name must be in what the commands
 *   printed. JSON is a report abridged: every field it shows is in a real report, with the same value.
 *   PromQL is checked by promtool (when installed) and names metrics the package exports. A `[diag]` line is
 *   what the package prints, produced for real.
 *
 * The fresh applications live under the package's .tmp/, so that the application's dependencies resolve to the
 * repository's node_modules, as they would from the user's; `diag-instrumentation` itself is a symlink in their
 * own node_modules, with its bin, as npm installs it. Relative links between these files are checked too.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { launchSpec, quietOtelEnv, startApp, tempDir, waitFor } from './support/app-process';
import { freePort } from '../support/ports';
import { findProgram, missingServiceMessage, servicesRequired } from '../support/services';
import { ATTRIBUTES, METRICS } from '../../src/telemetry/names';

const ROOT = path.resolve(__dirname, '..', '..');
const EXAMPLE_READMES = fs
  .readdirSync(path.join(ROOT, 'examples'))
  .map((dir) => `examples/${dir}/README.md`)
  .filter((file) => fs.existsSync(path.join(ROOT, file)));
/** The files whose blocks are checked. */
const CHECKED = [
  'README.md',
  'docs/configuration.md',
  'docs/reports.md',
  'docs/containers.md',
  'docs/compatibility.md',
  'docs/development.md',
  ...EXAMPLE_READMES,
];
/** docs/ files written before issue #38, whose blocks are not checked yet, with why. */
const NOT_YET_CHECKED: Record<string, string> = {
  'docs/actuator.md': 'reference written before #38; its endpoints are tested by test/e2e/actuator',
  'docs/benchmarks.md': 'no code blocks; its figures come from bench/, which the tests do not run',
  'docs/startup.md':
    'its step names and figures are checked by test/e2e/startup-timeline.test.ts and test/e2e/real-apps/startup-coverage.test.ts',
  'docs/ledger.md':
    'its commands need a running Redis and fleet; the ledger CLI, its table and JSON are tested by test/e2e/ledger/ledger.test.ts',
  'docs/errors.md': 'reference written before #38; its codes are tested by test/unit/errors',
  'docs/precision.md': 'reference written before #38; tested by test/e2e/precision.test.ts',
  'docs/sketches.md': 'reference written before #38; its API is tested by test/unit/sketch and test/e2e/sketch*',
  'docs/telemetry.md': 'reference written before #38; its names are tested by test/unit/telemetry',
  'docs/tracking.md': 'reference written before #38; tested by test/unit/ghost/tracking and test/e2e/phase2.test.ts',
};

interface Block {
  readonly file: string;
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  /** The block just before this one in the same file. */
  readonly previous?: Block;
}

function blocksOf(file: string): Block[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const out: Block[] = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  for (const m of text.matchAll(fence)) {
    const line = text.slice(0, m.index).split('\n').length;
    out.push({ file, line, lang: m[1]!, code: m[2]!, previous: out[out.length - 1] });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Fresh applications and the processes they start

const started = new Set<ChildProcess>();
const appDirs: string[] = [];
/** The README's telemetry.js (its text), and the reports of a real run of the example shop under it (made once). */
let reports: { telemetry: string; dir: string };

function freshApp(): string {
  fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, '.tmp', 'doc-blocks-'));
  appDirs.push(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'doc-block-app', private: true }, null, 2));
  fs.mkdirSync(path.join(dir, 'node_modules', '.bin'), { recursive: true });
  fs.symlinkSync(ROOT, path.join(dir, 'node_modules', 'diag-instrumentation'), 'dir');
  const bin = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> })
    .bin['diag-instrumentation']!;
  // linked and made executable, as npm does when it installs a package's bin
  fs.chmodSync(path.join(ROOT, bin), 0o755);
  fs.symlinkSync(path.join(ROOT, bin), path.join(dir, 'node_modules', '.bin', 'diag-instrumentation'));
  // the application the README's commands start: the example shop, compiled, as the user's dist/
  fs.symlinkSync(launchSpec('nest11-cjs').cwd, path.join(dir, 'dist'), 'dir');
  return dir;
}

/** A fresh application holding the README's telemetry.js and the reports of a real run. */
function readmeApp(): string {
  const dir = freshApp();
  fs.writeFileSync(path.join(dir, 'telemetry.js'), reports.telemetry);
  for (const f of fs.readdirSync(reports.dir)) fs.copyFileSync(path.join(reports.dir, f), path.join(dir, f));
  return dir;
}

async function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const gone = new Promise((resolve) => proc.once('exit', resolve));
  // a detached process leads its own group: signal the group, the application bash started included
  const kill = (signal: NodeJS.Signals): void => {
    try {
      if (proc.spawnargs[0] === 'bash') process.kill(-proc.pid!, signal);
      else proc.kill(signal);
    } catch {
      /* already gone */
    }
  };
  kill('SIGTERM');
  const timer = setTimeout(() => kill('SIGKILL'), 5_000);
  await gone;
  clearTimeout(timer);
  started.delete(proc);
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Shell blocks

/** Commands that are not run, with why and what is checked instead (which throws when the command is wrong). */
const NOT_RUN: { match: RegExp; why: string; check: (command: string) => void }[] = [
  {
    match: /^npm ci && npm test$/,
    why: 'it is the command running this test (CI runs it, .ci/run)',
    check: () => expect(packageJson().scripts.test).toBe('jest'),
  },
  {
    match: /^npm ci && npm run demo$/,
    why: 'npm ci would replace node_modules, and the demo rebuild dist/, under the tests running beside this one',
    check: () => expect(fs.existsSync(path.join(ROOT, 'scripts', 'demo.js'))).toBe(true),
  },
  {
    match: /^npm install diag-instrumentation( [@\w/.-]+)+$/,
    why: 'it installs from the registry; test/e2e/packaging.test.ts installs the packed package with npm instead',
    check: (command) => {
      // the one line installs the package, every peer that is not optional, and the SDK the registration uses
      const pkg = packageJson();
      const optional = Object.keys(pkg.peerDependenciesMeta ?? {}).filter(
        (p) => pkg.peerDependenciesMeta![p]!.optional,
      );
      const peers = Object.keys(pkg.peerDependencies).filter((p) => !optional.includes(p));
      expect(command.split(' ').slice(2).sort()).toEqual(
        ['diag-instrumentation', ...peers, '@opentelemetry/sdk-node'].sort(),
      );
    },
  },
  {
    match:
      /^(git clone <this repository> diag-instrumentation && cd diag-instrumentation|npm ci && npm pack|cd \/path\/to\/your-app|npm install \/path\/to\/diag-instrumentation\/diag-instrumentation-\*\.tgz( [@\w/.-]+)+)$/,
    why: 'installing from a clone before the package is published: test/e2e/packaging.test.ts packs the repository with npm pack and installs the tarball with npm',
    check: (command) => {
      const pkg = packageJson();
      // npm pack builds dist/ first (prepack), and the tarball's install names the same peers as the one-line one
      expect(pkg.scripts.prepack).toBeDefined();
      if (command.startsWith('npm install ')) {
        const optional = Object.keys(pkg.peerDependenciesMeta ?? {}).filter(
          (p) => pkg.peerDependenciesMeta![p]!.optional,
        );
        const peers = Object.keys(pkg.peerDependencies).filter((p) => !optional.includes(p));
        expect(command.split(' ').slice(3).sort()).toEqual([...peers, '@opentelemetry/sdk-node'].sort());
      }
    },
  },
  {
    match: /^npm run (lint|docs:settings|build)$/,
    why: 'it lints or rebuilds the whole repository: CI runs npm run lint, and a build would rewrite dist/ under the tests beside this one',
    check: (command) => expect(packageJson().scripts[command.split(' ')[2]!]).toBeDefined(),
  },
  {
    match: /^npx jest (\S+)$/,
    why: 'it is jest itself: the suite runs that file',
    check: (command) => expect(fs.existsSync(path.join(ROOT, command.split(' ')[2]!))).toBe(true),
  },
];

interface PackageJson {
  scripts: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}
const packageJson = (): PackageJson => JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

/** The block's commands: continuation lines joined, each with its comment apart. */
function commandsOf(code: string): { command: string; comment: string }[] {
  return code
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const hash = line.search(/\s#\s/);
      return hash < 0
        ? { command: line.trim(), comment: '' }
        : { command: line.slice(0, hash).trim(), comment: line.slice(hash).trim() };
    });
}

/** The fixed ports the docs name, and the setting that moves each. */
const FIXED_PORTS: Record<string, string> = {
  '3000': 'PORT',
  '8081': 'MANAGEMENT_SERVER_PORT',
  '9464': 'METRICS_PORT',
};

/** What the last command of each shell block printed, for the output block after it. */
const printed = new Map<Block, string>();

async function runShellBlock(block: Block): Promise<void> {
  // examples/ and the development notes speak of the repository; the README and the reference of a user's app
  const inRepository = block.file.startsWith('examples/') || block.file === 'docs/development.md';
  let cwd = inRepository ? ROOT : readmeApp();
  const ports: Record<string, number> = {};
  for (const fixed of Object.keys(FIXED_PORTS)) if (block.code.includes(fixed)) ports[fixed] = await freePort();
  const substitute = (command: string, appPort?: number): string => {
    let out = command;
    for (const [fixed, free] of Object.entries(ports))
      out = out.replace(new RegExp(`\\b${fixed}\\b`, 'g'), String(free));
    return appPort === undefined ? out : out.replace(/<port>/g, String(appPort));
  };
  const servers: ChildProcess[] = [];
  let appPort: number | undefined;
  let last = '';
  try {
    for (const { command, comment } of commandsOf(block.code)) {
      const skipped = NOT_RUN.find((n) => n.match.test(command));
      if (skipped) {
        skipped.check(command);
        continue;
      }
      const cd = /^cd (\S+)$/.exec(command);
      if (cd) {
        cwd = path.resolve(cwd, cd[1]!);
        expect(fs.existsSync(cwd)).toBe(true);
        continue;
      }
      const program = command.replace(/^(\w+=\S*\s+)*/, '').split(' ')[0];
      if (program === 'node') {
        // an application: started in the background, ready once it listens and every port the block names answers
        const reportDir = cwd.startsWith(path.join(ROOT, '.tmp')) ? cwd : tempDir('doc-block-report');
        const env: NodeJS.ProcessEnv = { ...process.env, ...quietOtelEnv(), DIAG_REPORT_DIR: reportDir };
        for (const [fixed, free] of Object.entries(ports)) env[FIXED_PORTS[fixed]!] = String(free);
        // its own process group, so that stopping it stops what bash started
        const proc = spawn('bash', ['-c', substitute(command)], {
          detached: true,
          cwd,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        started.add(proc);
        servers.push(proc);
        let out = '';
        proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
        proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
        try {
          await waitFor(async () => {
            if (proc.exitCode !== null) throw new Error(`exited with ${proc.exitCode}`);
            return /^LISTENING \d+/m.test(out) && fs.existsSync(path.join(reportDir, 'diag-report.json'));
          }, 30_000);
          appPort = Number(/^LISTENING (\d+)/m.exec(out)![1]);
          for (const port of Object.values(ports)) await waitFor(() => portOpen(port), 10_000);
        } catch (err) {
          throw new Error(`${block.file}:${block.line}: \`${command}\` did not start: ${String(err)}\n${out}`);
        }
        continue;
      }
      const run = spawnSync('bash', ['-o', 'pipefail', '-c', substitute(command, appPort)], {
        cwd,
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, ...quietOtelEnv() },
      });
      const expected = Number(/\bexit (\d)\b/.exec(comment)?.[1] ?? 0);
      if (run.status !== expected)
        throw new Error(
          `${block.file}:${block.line}: \`${command}\` exited with ${run.status}, not ${expected}\n${run.stdout}\n${run.stderr}`,
        );
      last = run.stdout;
    }
  } finally {
    await Promise.all(servers.map(stopProcess));
  }
  printed.set(block, last);
}

// ---------------------------------------------------------------------------------------------------------------
// TypeScript blocks

function tsc(dir: string, file: string, options: string[]): string {
  const run = spawnSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), ...options, '--strict', '--types', 'node', '--rootDir', dir, file],
    { cwd: dir, encoding: 'utf8' },
  );
  return run.stdout + run.stderr;
}

/** Writes the block as the file its first line names, typechecks it both ways, and emits it as a NestJS starter would. */
function compileTypeScript(block: Block): { dir: string; file: string } {
  const named = /^\/\/ ([\w.-]+\.ts)\b/.exec(block.code);
  if (!named) throw new Error(`${block.file}:${block.line}: a TypeScript block names its file on its first line`);
  const dir = freshApp();
  const file = path.join(dir, named[1]!);
  fs.writeFileSync(file, block.code);
  const decorators = ['--experimentalDecorators', '--emitDecoratorMetadata'];
  expect(
    tsc(dir, file, [
      '--noEmit',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      ...decorators,
    ]),
  ).toBe('');
  const starter = ['--module', 'commonjs', '--target', 'es2021', '--skipLibCheck', ...decorators];
  expect(tsc(dir, file, [...starter, '--outDir', path.join(dir, 'out')])).toBe('');
  return { dir, file: path.join(dir, 'out', named[1]!.replace(/\.ts$/, '.js')) };
}

/** A controller block with `@SketchLimit`: served by NestJS, its route answers `requests` times, then 429. */
async function serveLimitedController(block: Block): Promise<void> {
  const { dir, file } = compileTypeScript(block);
  const controller = /export class (\w+)/.exec(block.code)![1]!;
  const route = /@Controller\('([\w/-]+)'\)/.exec(block.code)![1]!;
  const verb = /@(Get|Post|Put|Delete|Patch)\(\)/.exec(block.code)![1]!.toUpperCase();
  const requests = Number(/requests: ([\d_]+)/.exec(block.code)![1]!.replace(/_/g, ''));
  const main = path.join(dir, 'main.js');
  fs.writeFileSync(
    main,
    `const { NestFactory } = require('@nestjs/core');
const { Module } = require('@nestjs/common');
const { ${controller} } = require(${JSON.stringify(file)});
class AppModule {}
Module({ controllers: [${controller}] })(AppModule);
NestFactory.create(AppModule, { logger: false }).then(async (app) => {
  await app.listen(0, '127.0.0.1');
  console.log('LISTENING ' + app.getHttpServer().address().port);
});
`,
  );
  const proc = spawn(process.execPath, [main], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(proc);
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  try {
    await waitFor(async () => /^LISTENING \d+/m.test(out), 20_000).catch((err) => {
      throw new Error(`${String(err)}\n${out}`);
    });
    const url = `http://127.0.0.1:${/^LISTENING (\d+)/m.exec(out)![1]}/${route}`;
    const statuses: number[] = [];
    for (let i = 0; i < requests; i++) statuses.push((await fetch(url, { method: verb })).status);
    expect(new Set(statuses)).toEqual(new Set([verb === 'POST' ? 201 : 200]));
    const over = await fetch(url, { method: verb });
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(over.headers.get('content-type')).toMatch(/json/);
  } finally {
    await stopProcess(proc);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// JSON, output and PromQL blocks

/** Where `example` (abridged with "...") says something `real` does not; empty when every shown field holds. */
function mismatches(example: unknown, real: unknown, at = ''): string[] {
  if (example === '...') return [];
  if (typeof example === 'string' && example.endsWith('...'))
    return typeof real === 'string' && real.startsWith(example.slice(0, -3)) ? [] : [at];
  if (typeof example === 'number' && /Ms$/.test(at)) return typeof real === 'number' ? [] : [at];
  if (Array.isArray(example)) {
    if (!Array.isArray(real)) return [at];
    const shown = example.filter((item) => item !== '...');
    const abridged = shown.length < example.length;
    if (shown.every((item) => typeof item !== 'object' || item === null)) {
      const missing = shown.filter((item) => !real.some((r) => mismatches(item, r).length === 0));
      if (missing.length > 0) return [`${at} lacks ${JSON.stringify(missing)}`];
      return abridged || shown.length === real.length ? [] : [`${at} has ${real.length} items, not ${shown.length}`];
    }
    // objects: each shown one is some real item, with every field it shows
    return shown.flatMap((item, i) =>
      real.some((r) => mismatches(item, r).length === 0) ? [] : [`${at}[${i}] ${JSON.stringify(item)}`],
    );
  }
  if (typeof example === 'object' && example !== null) {
    if (typeof real !== 'object' || real === null) return [at];
    return Object.entries(example).flatMap(([key, value]) =>
      key === '...' ? [] : mismatches(value, (real as Record<string, unknown>)[key], at ? `${at}.${key}` : key),
    );
  }
  return Object.is(example, real) ? [] : [`${at}: ${JSON.stringify(real)}, not ${JSON.stringify(example)}`];
}

/** Metric and label names as Prometheus shows them. */
const promqlNames = new Set(
  [...Object.values(METRICS).map((m) => m.name), ...Object.values(ATTRIBUTES)].map((n) => n.replace(/\./g, '_')),
);

function checkPromql(block: Block): void {
  for (const name of block.code.match(/\bdiag_\w+/g) ?? []) expect([...promqlNames]).toContain(name);
  const promtool = findProgram('promtool');
  if (!promtool) {
    if (servicesRequired()) throw new Error(missingServiceMessage('promtool'));
    console.log(`${block.file}:${block.line}: PromQL syntax not checked: ${missingServiceMessage('promtool')}`);
    return;
  }
  const rules = path.join(tempDir('doc-promql'), 'rules.yml');
  fs.writeFileSync(
    rules,
    `groups:\n  - name: doc\n    rules:\n      - record: doc:block\n        expr: ${JSON.stringify(block.code.trim())}\n`,
  );
  const run = spawnSync(promtool, ['check', 'rules', rules], { encoding: 'utf8' });
  expect(run.stdout + run.stderr).toMatch(/SUCCESS/);
}

async function checkReportExample(block: Block): Promise<void> {
  const example = JSON.parse(block.code) as { ghostCandidates?: unknown };
  expect(example.ghostCandidates).toBeDefined(); // a diag-report.json, the only JSON these files show
  const app = await startApp('nest11-cjs');
  try {
    expect(mismatches(example, app.readReport())).toEqual([]);
  } finally {
    await app.stop('SIGKILL');
  }
}

async function checkUnsupportedVersionLine(block: Block): Promise<void> {
  const app = await startApp('nest11-cjs', { app: 'inversify-app', root: 'inversify5' });
  try {
    expect(app.stderr().split('\n')).toContain(block.code.trim());
  } finally {
    await app.stop('SIGKILL');
  }
}

function checkOutput(block: Block): void {
  const before = block.previous!;
  const out = printed.get(before);
  if (out === undefined) throw new Error(`${block.file}:${block.line}: the shell block before it has not run`);
  for (const line of block.code.split('\n').filter((l) => l.trim() !== '' && l.trim() !== '...')) {
    expect(out).toContain(/^[\w:]+/.exec(line)![0]);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Who checks which block

interface Check {
  readonly name: string;
  claims(block: Block): boolean;
  run(block: Block): Promise<void> | void;
}

const CHECKS: Check[] = [
  {
    name: 'run as pasted by test/e2e/readme.test.ts',
    claims: (b) => ['js', 'ts'].includes(b.lang) && /^\/\/ telemetry\.(js|mjs|ts) /.test(b.code),
    run: (b) => {
      const file = /^\/\/ (telemetry\.\w+) /.exec(b.code)![1]!;
      expect(b.file).toBe('README.md');
      expect(fs.readFileSync(path.join(__dirname, 'readme.test.ts'), 'utf8')).toContain(`snippet('${file}')`);
    },
  },
  {
    name: 'typechecked, compiled and served by NestJS: the limit answers 429',
    claims: (b) => b.lang === 'ts' && b.code.includes('@SketchLimit(') && b.code.includes('@Controller('),
    run: serveLimitedController,
  },
  { name: 'typechecked against dist/', claims: (b) => b.lang === 'ts', run: (b) => void compileTypeScript(b) },
  { name: 'run', claims: (b) => b.lang === 'sh', run: runShellBlock },
  { name: "the previous block's output", claims: (b) => b.lang === '' && b.previous?.lang === 'sh', run: checkOutput },
  {
    name: 'printed by a real process',
    claims: (b) => b.lang === '' && b.code.startsWith('[diag] WARN inversify 5'),
    run: checkUnsupportedVersionLine,
  },
  { name: 'fields of a real diag-report.json', claims: (b) => b.lang === 'json', run: checkReportExample },
  { name: 'promtool and metric names', claims: (b) => b.lang === 'promql', run: checkPromql },
];

// ---------------------------------------------------------------------------------------------------------------

beforeAll(async () => {
  // The README's telemetry.js, run once in front of the example shop until it ends, for the reports the
  // commands read (diag-report.json at start, diag-ghost-report.json with Phase 2 at the end).
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const telemetry = [...readme.matchAll(/```js\n(\/\/ telemetry\.js [\s\S]*?)```/g)][0]![1]!;
  const dir = freshApp();
  fs.writeFileSync(path.join(dir, 'telemetry.js'), telemetry);
  const proc = spawn(process.execPath, ['--require', './telemetry.js', 'dist/main.js'], {
    cwd: dir,
    env: { ...process.env, ...quietOtelEnv(), DIAG_REPORT_DIR: undefined, NODE_ENV: 'development' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(proc);
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor(async () => fs.existsSync(path.join(dir, 'diag-report.json')), 30_000).catch((err) => {
    throw new Error(`${String(err)}\n${out}`);
  });
  await stopProcess(proc);
  expect(fs.existsSync(path.join(dir, 'diag-ghost-report.json'))).toBe(true);
  const kept = tempDir('doc-block-reports');
  for (const f of ['diag-report.json', 'diag-ghost-report.json'])
    fs.copyFileSync(path.join(dir, f), path.join(kept, f));
  reports = { telemetry, dir: kept };
}, 60_000);

afterAll(async () => {
  await Promise.all([...started].map(stopProcess));
  for (const dir of appDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('every docs file is checked or listed', () => {
  it('docs/*.md: each is in CHECKED or in NOT_YET_CHECKED with a reason', () => {
    const docs = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
    const unlisted = docs.map((f) => `docs/${f}`).filter((f) => !CHECKED.includes(f) && !(f in NOT_YET_CHECKED));
    expect(unlisted).toEqual([]);
  });
});

for (const file of CHECKED) {
  describe(file, () => {
    for (const block of blocksOf(file)) {
      const claimed = CHECKS.find((c) => c.claims(block));
      const title = `line ${block.line} (${block.lang || 'plain'}): ${claimed?.name ?? 'no check claims it'}`;
      it(
        title,
        async () => {
          if (!claimed) throw new Error(`${file}:${block.line}: no check claims this block:\n${block.code}`);
          await claimed.run(block);
        },
        90_000,
      );
    }
  });
}

/** GitHub's anchor of a heading. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

describe('relative links', () => {
  const files = [...CHECKED, ...Object.keys(NOT_YET_CHECKED), 'ARCHITECTURE.md'];
  it.each(files)('%s: every relative link names a file that exists and, after #, one of its headings', (file) => {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8').replace(/^```[\s\S]*?^```$/gm, '');
    const broken: string[] = [];
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue;
      const [name, anchor] = target.split('#') as [string, string | undefined];
      const resolved = name === '' ? path.join(ROOT, file) : path.resolve(path.dirname(path.join(ROOT, file)), name);
      if (!fs.existsSync(resolved)) {
        broken.push(target);
        continue;
      }
      if (anchor === undefined || !resolved.endsWith('.md')) continue;
      const headings = fs
        .readFileSync(resolved, 'utf8')
        .replace(/^```[\s\S]*?^```$/gm, '')
        .split('\n')
        .filter((l) => /^#+ /.test(l))
        .map((l) => slug(l.replace(/^#+ /, '')));
      if (!headings.includes(anchor)) broken.push(target);
    }
    expect(broken).toEqual([]);
  });
});
