/**
 * Findings at the TypeScript line (issue #43 §5): an application built with tsc's `sourceMap: true`, as a user
 * builds one (a project folder with its package.json, `src/*.ts` compiled to `dist/*.js` + `.map`, started from the
 * project), and the same build bundled and minified by esbuild with its map. Every report names the `.ts` file
 * relative to the project and the method's line in it, read here from the `.ts` itself.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { actuatorPort, getJson, startSpec, tempDir, type RunningApp, TRACKED_ONE_RUN_ENV } from './support/app-process';

const root = path.resolve(__dirname, '..', '..');
const apps = path.join(root, 'test/fixtures/apps');
const TS_FILE = 'src/tracking-app/tracking.module.ts';

/** The tracking app as a project of its own, compiled by tsc with source maps into dist/. */
function buildProject(): string {
  const project = tempDir('tsc-project');
  fs.mkdirSync(path.join(project, 'src', 'tracking-app'), { recursive: true });
  fs.copyFileSync(path.join(apps, 'serve.ts'), path.join(project, 'src', 'serve.ts'));
  for (const f of ['main.ts', 'tracking.module.ts', 'hidden-helpers.ts', 'stamp.middleware.ts'])
    fs.copyFileSync(path.join(apps, 'tracking-app', f), path.join(project, 'src', 'tracking-app', f));
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(project, 'node_modules'), 'dir');
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'items-api', private: true }));
  fs.writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'commonjs',
        moduleResolution: 'node10',
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
        esModuleInterop: true,
        skipLibCheck: true,
        strict: true,
        types: ['node'],
        rootDir: 'src',
        outDir: 'dist',
        sourceMap: true,
      },
      include: ['src'],
    }),
  );
  const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', project], {
    encoding: 'utf8',
  });
  if (tsc.status !== 0) throw new Error(`tsc failed:\n${tsc.stdout}\n${tsc.stderr}`);
  return project;
}

/** What the test reads of one run: both reports and the live snapshot, once the app has ended. */
interface Run {
  readonly report: any;
  readonly ghosts: any;
  readonly live: any;
  readonly ledger: any;
  readonly reportDir: string;
}

async function run(cwd: string, main: string): Promise<Run> {
  const telemetry = path.join(root, 'test/fixtures/telemetry/telemetry.cjs');
  let app: RunningApp | undefined;
  try {
    app = await startSpec({ node: process.execPath, cwd, args: ['--require', telemetry, main] }, main, {
      env: TRACKED_ONE_RUN_ENV,
    });
    expect((await getJson(app.port, '/exercise')).status).toBe(200);
    expect((await getJson(app.port, '/heartbeat')).status).toBe(200);
    const live = (await getJson(actuatorPort(app), '/actuator/diag/ghosts')).body;
    // the ledger's answer in one run's shape (no ledger configured): beans[] for verdicts[]
    const ledger = (await getJson(actuatorPort(app), '/actuator/diag/ledger')).body;
    await app.stop('SIGTERM');
    return {
      report: app.readReport(),
      ghosts: app.readReport('diag-ghost-report.json'),
      live,
      ledger: { ...ledger, verdicts: ledger.beans },
      reportDir: app.reportDir,
    };
  } finally {
    await app?.stop('SIGKILL');
  }
}

/** The line (1-based) of the `.ts` that starts with `text`, read from the file itself. */
function tsLine(project: string, text: string, after = 0): number {
  const lines = fs.readFileSync(path.join(project, TS_FILE), 'utf8').split('\n');
  const at = lines.findIndex((l, i) => i >= after && l.trimStart().startsWith(text));
  if (at < 0) throw new Error(`no line ${text} in ${TS_FILE}`);
  return at + 1;
}

function expectTypeScriptLines(project: string, { report, ghosts, live, ledger }: Run): void {
  const archive = { file: TS_FILE, line: tsLine(project, 'archive(): number {') };
  const load = { file: TS_FILE, line: tsLine(project, 'async load(id: number)') };
  const neverCalled = { file: TS_FILE, line: tsLine(project, 'neverCalled(): unknown {') };
  const greet = { file: TS_FILE, line: tsLine(project, 'greet(name: string): string {') };
  for (const answer of [ghosts, live, ledger]) {
    const bean = answer.verdicts.find((v: any) => v.name === 'AsyncService');
    const method = (name: string) => bean.methods.find((m: any) => m.name === name);
    expect(method('archive')).toMatchObject({ verdict: 'never-touched', source: archive });
    expect(method('load')).toMatchObject({ verdict: 'in-use', source: load });
    // an inherited method is where its base class defines it (BaseGreeter, above InheritedGreeter)
    const inherited = answer.verdicts.find((v: any) => v.name === 'InheritedGreeter');
    expect(inherited.methods).toEqual([expect.objectContaining({ name: 'greet', source: greet })]);
    // the same line never called on another bean that shares it: live code, said so
    const sharing = answer.verdicts.find((v: any) => v.name === 'WavingGreeter');
    expect(sharing.methods.find((m: any) => m.name === 'greet')).toMatchObject({
      verdict: 'never-touched',
      source: greet,
      calledThrough: ['InheritedGreeter'],
    });
    const endpoint = answer.endpoints.find((e: any) => e.route === 'GET /never-called');
    expect(endpoint).toMatchObject({ kind: 'http', verdict: 'never-touched', source: neverCalled });
  }
  // the bean graph's nodes too, and nothing names a compiled file or an absolute path
  const node = report.graph.nodes.find((n: any) => n.name === 'AsyncService');
  expect(node.source).toBe(TS_FILE);
  expect(JSON.stringify(ghosts)).not.toMatch(/\.js"|tracking\.module\.js|"\/(?:tmp|home)\//);
}

describe('findings at the TypeScript line', () => {
  let project: string;

  beforeAll(() => {
    project = buildProject();
  }, 120_000);

  it("tsc's sourceMap: every report names src/…/*.ts and the method's line in it, the check gate's SARIF too", async () => {
    const result = await run(project, path.join('dist', 'tracking-app', 'main.js'));
    expectTypeScriptLines(project, result);
    // a middleware applied with .exclude(): Nest's renamed subclass stands in its place, its class's file still found
    const middleware = result.report.graph.nodes.find((n: any) => n.role === 'middleware');
    expect(middleware).toMatchObject({ className: 'StampMiddleware', source: 'src/tracking-app/stamp.middleware.ts' });
    expect(middleware).not.toHaveProperty('registeredIn');
    const cli = path.join(root, 'dist', 'ghost', 'cli', 'index.js');
    const report = path.join(result.reportDir, 'diag-ghost-report.json');
    const sarif = spawnSync(process.execPath, [cli, 'check', report, '--format', 'sarif'], { encoding: 'utf8' });
    const results = JSON.parse(sarif.stdout).runs[0].results;
    const archive = results.find((r: any) => r.partialFingerprints['diagMember/v1'] === 'AsyncService#archive');
    expect(archive.locations[0].physicalLocation).toEqual({
      artifactLocation: { uri: TS_FILE },
      region: { startLine: tsLine(project, 'archive(): number {') },
    });
    // the base's greet runs through InheritedGreeter: code scanning must not annotate its line as dead
    const greetLine = tsLine(project, 'greet(name: string): string {');
    expect(results.filter((r: any) => r.locations[0].physicalLocation?.region?.startLine === greetLine)).toEqual([]);
    const route = results.find((r: any) => r.partialFingerprints['diagMember/v1'] === 'http GET /never-called');
    expect(route.locations[0].physicalLocation).toEqual({
      artifactLocation: { uri: TS_FILE },
      region: { startLine: tsLine(project, 'neverCalled(): unknown {') },
    });
    // a bean untouched as a whole (only Nest's hook ran) at its class's line, in SARIF and in the gate's words
    const classAt = tsLine(project, 'export class LifecycleOnly implements OnModuleInit {');
    const bean = results.find((r: any) => r.partialFingerprints['diagBean/v1'] === 'TrackingModule/LifecycleOnly');
    expect(bean.locations[0].physicalLocation).toEqual({
      artifactLocation: { uri: TS_FILE },
      region: { startLine: classAt },
    });
    expect(result.ghosts.verdicts.find((v: any) => v.name === 'LifecycleOnly')).toMatchObject({
      source: TS_FILE,
      line: classAt,
    });
    // a library's class the application registers has no file of its own: it stands at its registration
    const logger = results.find((r: any) => r.partialFingerprints['diagBean/v1'] === 'TrackingModule/Logger');
    expect(logger.locations[0].physicalLocation).toEqual({
      artifactLocation: { uri: TS_FILE },
      region: { startLine: tsLine(project, 'Logger,', tsLine(project, '@Module({')) },
    });
    // and says so; one run is no verdict, so nothing is advised to be removed
    expect(logger.message.text).toMatch(/registered on the line shown\.$/);
    expect(logger.message.text).not.toMatch(/remove/);
    const unexported = results.find(
      (r: any) => r.partialFingerprints['diagBean/v1'] === 'TrackingModule/UnexportedHelper',
    );
    expect(unexported.locations[0].physicalLocation.region).toEqual({
      startLine: tsLine(project, 'class UnexportedHelper {'),
    });
    const archived = results.find((r: any) => r.partialFingerprints['diagBean/v1'] === 'TrackingModule/ArchivedHelper');
    expect(archived.locations[0].physicalLocation.artifactLocation).toEqual({ uri: TS_FILE });
    expect(archived.message.text).toMatch(/its class's file was not found: a class no module exports, or a library's/);
    const text = spawnSync(process.execPath, [cli, 'check', report], { encoding: 'utf8' });
    expect(text.stdout).toContain(`  LifecycleOnly (TrackingModule, ${TS_FILE}:${classAt})\n`);
    expect(text.stdout).toContain(
      `  Logger (TrackingModule, registered at ${TS_FILE}:${tsLine(project, 'Logger,', tsLine(project, '@Module({'))})\n`,
    );
    expect(text.stdout).not.toMatch(/WavingGreeter\.greet/);
    // The page, written by the application where its sources are, says which interface declares a dead method,
    // as the CLI does: read from the data the page embeds.
    const html = fs.readFileSync(path.join(result.reportDir, 'diag-report.html'), 'utf8');
    const data = JSON.parse(/<script[^>]*id="diag-data"[^>]*>([\s\S]*?)<\/script>/.exec(html)![1]!);
    const archiveRow = data.verdicts.beans
      .find((b: any) => b.name === 'AsyncService')
      .methods.find((m: any) => m.name === 'archive');
    expect(data.contractsNote).toBeUndefined();
    expect(archiveRow.contract).toEqual({
      kind: 'interface',
      name: 'Archiver',
      file: TS_FILE,
      line: tsLine(project, 'archive(): number;'),
    });
    // run away from the sources, the gate says it could not read the contracts rather than saying nothing of them
    expect(text.stdout).toContain(
      `(The methods' TypeScript files, such as ${TS_FILE}, are not under ${process.cwd()}: run from the application's repository`,
    );
    expect(text.stdout).not.toContain('declared by interface');
    // the same words from the gate run where the sources are
    const inProject = spawnSync(process.execPath, [cli, 'check', report], { encoding: 'utf8', cwd: project });
    expect(inProject.stdout).not.toContain('TypeScript files, such as');
    expect(inProject.stdout).toContain(
      `declared by interface Archiver (${TS_FILE}:${tsLine(project, 'archive(): number;')}): remove it there too`,
    );
  }, 60_000);

  it('a bundle minified with its map (esbuild over the tsc build): the same file and lines', async () => {
    require('esbuild').buildSync({
      entryPoints: [path.join(project, 'dist', 'tracking-app', 'main.js')],
      bundle: true,
      minify: true,
      platform: 'node',
      format: 'cjs',
      packages: 'external',
      outfile: path.join(project, 'bundle', 'main.js'),
      sourcemap: true,
      logLevel: 'silent',
    });
    const result = await run(project, path.join('bundle', 'main.js'));
    expectTypeScriptLines(project, result);
  }, 60_000);

  it('started from a folder inside its project (cd dist): still relative to the project, never absolute', async () => {
    expectTypeScriptLines(project, await run(path.join(project, 'dist'), path.join('tracking-app', 'main.js')));
  }, 60_000);

  it('run from an image of dist/ and its maps without src/: the same TypeScript files and lines, through the maps', async () => {
    // What a container image holds: the build and its maps, the package.json, the dependencies; no TypeScript.
    const image = tempDir('dist-image');
    fs.cpSync(path.join(project, 'dist'), path.join(image, 'dist'), { recursive: true });
    fs.copyFileSync(path.join(project, 'package.json'), path.join(image, 'package.json'));
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(image, 'node_modules'), 'dir');
    const result = await run(image, path.join('dist', 'tracking-app', 'main.js'));
    // the lines read here from the project's TypeScript, which the running image never had
    expectTypeScriptLines(project, result);
    const logger = result.ghosts.verdicts.find((v: any) => v.name === 'Logger');
    expect(logger).toMatchObject({
      registered: true,
      source: TS_FILE,
      line: tsLine(project, 'Logger,', tsLine(project, '@Module(')),
    });
    // The page, written in the image, cannot read the interfaces there, and says where they can be read.
    const html = fs.readFileSync(path.join(result.reportDir, 'diag-report.html'), 'utf8');
    const page = JSON.parse(/<script[^>]*id="diag-data"[^>]*>([\s\S]*?)<\/script>/.exec(html)![1]!);
    expect(page.contractsNote).toMatch(
      /^The methods' TypeScript files, such as src\/tracking-app\/tracking\.module\.ts, are not under \S+: run from the application's repository/,
    );
  }, 60_000);

  it('falls back to the compiled file and its line when there is no map', async () => {
    for (const map of fs.readdirSync(path.join(project, 'dist', 'tracking-app')).filter((f) => f.endsWith('.map')))
      fs.rmSync(path.join(project, 'dist', 'tracking-app', map));
    const { ghosts, reportDir } = await run(project, path.join('dist', 'tracking-app', 'main.js'));
    const compiled = fs.readFileSync(path.join(project, 'dist/tracking-app/tracking.module.js'), 'utf8').split('\n');
    // The page cannot read an interface from compiled files, and says so rather than saying nothing of contracts.
    const html = fs.readFileSync(path.join(reportDir, 'diag-report.html'), 'utf8');
    const page = JSON.parse(/<script[^>]*id="diag-data"[^>]*>([\s\S]*?)<\/script>/.exec(html)![1]!);
    expect(page.contractsNote).toMatch(
      /^The methods are named in their compiled files, such as dist\/tracking-app\/tracking\.module\.js: the application ran without its TypeScript or its source maps/,
    );
    const bean = ghosts.verdicts.find((v: any) => v.name === 'AsyncService');
    expect(bean.methods.find((m: any) => m.name === 'archive').source).toEqual({
      file: 'dist/tracking-app/tracking.module.js',
      line: compiled.findIndex((l) => l.trimStart().startsWith('archive() {')) + 1,
    });
    // a library's class the application registers: at its registration in the compiled module (tsc's __decorate)
    const logger = ghosts.verdicts.find((v: any) => v.name === 'Logger');
    expect(logger).toMatchObject({
      registered: true,
      source: 'dist/tracking-app/tracking.module.js',
      line: compiled.findIndex((l) => l.trim() === 'common_1.Logger,') + 1,
    });
    expect(logger).not.toHaveProperty('classFileUnknown');
    // the application's own class its module's file declares without exporting it: found there, at its class
    const unexported = ghosts.verdicts.find((v: any) => v.name === 'UnexportedHelper');
    expect(unexported).toMatchObject({
      source: 'dist/tracking-app/tracking.module.js',
      line: compiled.findIndex((l) => /\bclass UnexportedHelper\b/.test(l)) + 1,
    });
    expect(unexported).not.toHaveProperty('registered');
    // one declared in a file that exports only a list of it: at its module's registration, still its class
    expect(ghosts.verdicts.find((v: any) => v.name === 'ArchivedHelper')).toMatchObject({
      registered: true,
      classFileUnknown: true,
      source: 'dist/tracking-app/tracking.module.js',
    });
    // an untouched bean at its class's line in the compiled file (tsc's `let X = class X {`)
    expect(ghosts.verdicts.find((v: any) => v.name === 'LifecycleOnly')).toMatchObject({
      source: 'dist/tracking-app/tracking.module.js',
      line: compiled.findIndex((l) => /\bclass LifecycleOnly\b/.test(l)) + 1,
    });
  }, 60_000);
});
