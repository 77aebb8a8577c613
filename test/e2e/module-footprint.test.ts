/**
 * What each phase loads of the package, on the start-up benchmark's NestJS app started as a real process:
 * Phase 1 must not load Phase 2's wrapper machinery (its largest module), which the passport adapter once
 * pulled in for one lookup, and neither phase the analysis's modules, which run after ready. Loading costs
 * start-up time that no call of ours shows (docs/benchmarks.md).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { quietOtelEnv, tempDir } from './support/app-process';

const root = path.resolve(__dirname, '..', '..');
const dist = path.join(root, 'dist') + path.sep;

/**
 * The package's modules (relative to dist/) in require.cache once the app is ready: the NestJS bench app, or
 * with `container` the lazy containers' one.
 */
function loadedAtReady(tracking: boolean, container?: 'inversify' | 'tsyringe' | 'awilix'): string[] {
  const app = container === undefined ? 'app.js' : 'container-app.js';
  const probe = `
    const reallyExit = process.reallyExit;
    process.reallyExit = (code) => {
      const ours = Object.keys(require.cache).filter((f) => f.startsWith(${JSON.stringify(dist)}));
      process.stdout.write('LOADED ' + JSON.stringify(ours.map((f) => f.slice(${dist.length}).split(require('path').sep).join('/'))) + '\\n');
      reallyExit.call(process, code);
    };`;
  const out = execFileSync(
    process.execPath,
    [
      '-r',
      path.join(root, 'test', 'fixtures', 'telemetry', 'telemetry.cjs'),
      '-e',
      `${probe}\nrequire(${JSON.stringify(path.join(root, 'bench', 'startup', app))})`,
    ],
    {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        ...process.env,
        ...quietOtelEnv(),
        PROVIDERS: '20',
        BINDINGS: '20',
        ...(container !== undefined ? { CONTAINER: container } : {}),
        DIAG_BENCH_EXIT_AT_READY: '1',
        DIAG_LOG_LEVEL: 'warn',
        DIAG_REPORT_DIR: tempDir('footprint'),
        DIAG_GHOST_TRACKING_ENABLED: String(tracking),
      },
    },
  );
  const line = /^LOADED (.*)$/m.exec(out);
  if (!line) throw new Error(`the app printed no module list:\n${out}`);
  return JSON.parse(line[1]!) as string[];
}

/**
 * The regular expression literals with a Unicode property escape (`\p{L}`) in the modules `loaded`: V8 checks
 * a literal when it parses the module, and such a class makes it build ICU's set of every character it names,
 * on every start (2-3 M instructions for one `\p{L}` literal, docs/benchmarks.md). Built with `new RegExp` at
 * their first use instead, they cost a start nothing.
 */
function propertyEscapeLiterals(loaded: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of loaded) {
    const source = ts.createSourceFile(file, fs.readFileSync(path.join(dist, file), 'utf8'), ts.ScriptTarget.Latest);
    const visit = (node: ts.Node): void => {
      if (ts.isRegularExpressionLiteral(node) && /\\[pP]\{/.test(node.text)) found.push(`${file}: ${node.text}`);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe("the package's modules loaded by start-up", () => {
  it('Phase 1 runs the NestJS adapter without the first-touch machinery', () => {
    const loaded = loadedAtReady(false);
    expect(loaded).toEqual(expect.arrayContaining(['index.js', 'adapters/nestjs/container-observer.js']));
    // passport's analysis loads with @nestjs/passport or after ready: this app has no passport
    expect(loaded).not.toContain('adapters/nestjs/passport.js');
    expect(loaded).not.toContain('ghost/tracking/first-touch.js');
    // nor the tracker's books, nor the watch of the process's end that writes the ghost report
    expect(loaded).not.toContain('ghost/tracking/tracker.js');
    expect(loaded).not.toContain('ghost/process-end.js');
    // the inventory of endpoints is read after ready, and loaded then
    expect(loaded).not.toContain('adapters/nestjs/endpoints.js');
    expect(loaded).not.toContain('adapters/nestjs/http-routes.js');
    expect(loaded).not.toContain('ghost/analysis/cron.js');
    // the container's reader and the entry-point classifier run on the analysis's turn, after ready
    for (const analysis of ['adapters/nestjs/container-reader.js', 'adapters/nestjs/entry-points.js'])
      expect(loaded).not.toContain(analysis);
    expect(loaded).not.toContain('ghost/analysis/bean-graph.js');
    // where classes were declared (source maps, a bundle's text) is asked after ready
    expect(loaded).not.toContain('ghost/origins/declared-class.js');
    expect(loaded).not.toContain('ghost/origins/source-map.js');
    // nor the two public functions an app calls only if it uses them (the ghost reports' merge, @Kept())
    expect(loaded).not.toContain('ghost/tracking/ghost-report.js');
    expect(loaded).not.toContain('ghost/kept.js');
    // nor the lazy containers' ready (diagReady loads it when called), nor Phase 2's questions of whose bean
    expect(loaded).not.toContain('adapters/lazy/ready.js');
    expect(loaded).not.toContain('adapters/nestjs/framework-beans.js');
    expect(propertyEscapeLiterals(loaded)).toEqual([]);
    // An adapter's definitions are built when its container loads: a NestJS app never loads the others'.
    for (const container of ['inversify', 'tsyringe', 'awilix'])
      expect(loaded).not.toContain(`adapters/lazy/${container}/module-definitions.js`);
  });

  it('Phase 2 loads it, and still leaves the analysis for after ready', () => {
    const loaded = loadedAtReady(true);
    expect(loaded).toContain('ghost/tracking/first-touch.js');
    // Phase 2 asks whose bean each one is while the container starts: a module of its own, not the reader
    expect(loaded).toContain('adapters/nestjs/framework-beans.js');
    expect(loaded).not.toContain('adapters/nestjs/container-reader.js');
    expect(loaded).not.toContain('ghost/analysis/bean-graph.js');
    expect(propertyEscapeLiterals(loaded)).toEqual([]);
  });

  it.each(['inversify', 'tsyringe', 'awilix'] as const)(
    '%s: a start loads its adapter and leaves the graph for after ready',
    (container) => {
      const loaded = loadedAtReady(false, container);
      expect(loaded).toContain(`adapters/lazy/${container}/container-observer.js`);
      expect(loaded).toContain('adapters/lazy/bindings.js');
      // the bindings become a graph at ready, on the turn after the listen
      expect(loaded).not.toContain('ghost/analysis/bean-graph.js');
      expect(loaded).not.toContain('adapters/nestjs/container-observer.js');
      expect(loaded).not.toContain('ghost/tracking/tracker.js');
      expect(propertyEscapeLiterals(loaded)).toEqual([]);
    },
  );
});
