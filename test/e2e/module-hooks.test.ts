import * as fs from 'node:fs';
import * as path from 'node:path';
import { quietOtelEnv, scriptResult, tempDir } from './support/app-process';

/**
 * The CommonJS hook that replaced require-in-the-middle (src/patching/module-hooks.ts), in a real process: jest
 * replaces `require`, so the hook is exercised by a script on packages written to a temporary node_modules.
 */
const root = path.resolve(__dirname, '..', '..');

function writePackage(dir: string, name: string, version: string, files: Record<string, string>): void {
  const pkg = path.join(dir, 'node_modules', ...name.split('/'));
  fs.mkdirSync(pkg, { recursive: true });
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name, version, main: 'index.js' }));
  for (const [file, source] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(pkg, file)), { recursive: true });
    fs.writeFileSync(path.join(pkg, file), source);
  }
}

it('patches a package entry and its inner files once loaded, skips unsupported versions (warning once), survives a throwing patch, and undoes it all', () => {
  const dir = tempDir('module-hooks');
  const inner = "class Engine { run() { return 'ran'; } }\nmodule.exports = { Engine };\n";
  writePackage(dir, '@acme/core', '2.1.0', {
    'index.js': "const { Engine } = require('./lib/engine.js');\nmodule.exports = { Engine, hello: () => 'hello' };\n",
    'lib/engine.js': inner,
  });
  writePackage(dir, 'old-lib', '1.0.0', {
    'index.js': "require('./lib/inner.js');\nmodule.exports = { v: 1 };\n",
    'lib/inner.js': 'module.exports = {};\n',
  });
  writePackage(dir, 'early', '3.0.0', { 'index.js': 'module.exports = { early: true };\n' });
  writePackage(dir, 'broken', '1.0.0', { 'index.js': 'module.exports = { fine: true };\n' });
  const script = path.join(dir, 'main.js');
  fs.writeFileSync(
    script,
    `const Module = require('node:module');
const { InstrumentationNodeModuleDefinition: Def, InstrumentationNodeModuleFile: File } = require('@opentelemetry/instrumentation');
const { ModuleHooks } = require(${JSON.stringify(path.join(root, 'dist', 'patching', 'module-hooks.js'))});
const { wrapMethod, unwrapMethod } = require(${JSON.stringify(path.join(root, 'dist', 'patching', 'wrap.js'))});
const seen = [];
const early = require('early'); // loaded before the hooks exist
const pristineLoad = Module.prototype.load;
const hooks = new ModuleHooks([
  new Def('@acme/core', ['>=2.0.0 <3'], (exports, version) => { seen.push('core@' + version); return { ...exports, patched: true }; }, () => seen.push('core unpatched'), [
    new File('@acme/core/lib/engine.js', ['>=2.0.0 <3'], (exports) => {
      wrapMethod(exports.Engine.prototype, 'run', (orig) => function () { return orig.call(this) + ' (seen)'; });
      seen.push('engine');
      return exports;
    }, (exports) => unwrapMethod(exports.Engine.prototype, 'run')),
  ]),
  new Def('old-lib', ['>=2.0.0'], () => { seen.push('old-lib patched'); }, undefined, [
    new File('old-lib/lib/inner.js', ['>=2.0.0 <3'], () => { seen.push('old-lib inner patched'); }),
  ]),
  new Def('early', ['*'], (exports) => { exports.late = true; seen.push('early'); return exports; }),
  new Def('broken', ['*'], () => { throw new Error('patch bug'); }),
]);
hooks.enable();
const hookInstalled = Module.prototype.load !== pristineLoad;
const core = require('@acme/core');
const { Engine } = require('@acme/core/lib/engine.js');
const oldLib = require('old-lib');
const broken = require('broken');
const result = {
  seen: [...seen],
  patchedEntry: core.patched === true,
  cachedEntrySame: require('@acme/core') === core,
  run: new Engine().run(),
  oldLib,
  early: early.late === true,
  broken,
  hookInstalled,
};
hooks.disable();
result.afterDisable = { run: new Engine().run(), seen: seen.slice(result.seen.length), loadRestored: Module.prototype.load === pristineLoad };
console.log('RESULT ' + JSON.stringify(result));
`,
  );
  const { result, stderr } = scriptResult([script], dir, {
    NODE_PATH: path.join(root, 'node_modules'),
    DIAG_LOG_LEVEL: 'warn',
  });
  expect(result).toEqual({
    // inner files finish loading before the entry that requires them
    seen: ['early', 'engine', 'core@2.1.0'],
    patchedEntry: true,
    cachedEntrySame: true,
    run: 'ran (seen)',
    oldLib: { v: 1 },
    early: true,
    broken: { fine: true },
    hookInstalled: true,
    afterDisable: { run: 'ran', seen: ['core unpatched'], loadRestored: true },
  });
  expect(stderr).toContain('patching broken failed; that part of the detector is off: patch bug');
  // its entry and its hooked file both pass the hook: one warning for the package and version
  expect(stderr.split('\n').filter((line) => line.includes('old-lib'))).toEqual([
    '[diag] WARN old-lib 1.0.0 is outside the versions diag-instrumentation supports (>=2.0.0, >=2.0.0 <3): it is left unpatched and the detector sees nothing of it',
  ]);
}, 40_000);

it('builds deferred definitions only when one of their packages loads, or when they are asked for', () => {
  const dir = tempDir('module-hooks-deferred');
  writePackage(dir, 'lazy-core', '1.0.0', { 'index.js': 'module.exports = { core: true };\n' });
  writePackage(dir, 'lazy-plugin', '1.0.0', { 'index.js': 'module.exports = { plugin: true };\n' });
  const script = path.join(dir, 'main.js');
  fs.writeFileSync(
    script,
    `const { InstrumentationNodeModuleDefinition: Def } = require('@opentelemetry/instrumentation');
const { ModuleHooks } = require(${JSON.stringify(path.join(root, 'dist', 'patching', 'module-hooks.js'))});
const seen = [];
const patch = (name) => (exports) => { seen.push('patched ' + name); return { ...exports, patched: true }; };
const hooks = new ModuleHooks([
  { packages: ['lazy-core', 'lazy-plugin'], build: () => { seen.push('built lazy'); return [new Def('lazy-core', ['*'], patch('lazy-core')), new Def('lazy-plugin', ['*'], patch('lazy-plugin'))]; } },
  { packages: ['never-loaded'], build: () => { seen.push('built never-loaded'); return [new Def('never-loaded', ['*'], patch('never-loaded'))]; } },
  { packages: ['failing'], build: () => { throw new Error('no adapter'); } },
]);
hooks.enable();
const before = [...seen];
const core = require('lazy-core');
const plugin = require('lazy-plugin');
const afterLoads = [...seen];
const names = hooks.definitions().map((d) => d.name);
console.log('RESULT ' + JSON.stringify({ before, afterLoads, after: seen, core, plugin, names }));
`,
  );
  const { result } = scriptResult([script], dir, {
    NODE_PATH: path.join(root, 'node_modules'),
    DIAG_LOG_LEVEL: 'warn',
  });
  expect(result).toEqual({
    before: [],
    // one build for both packages, at the first of them to load
    afterLoads: ['built lazy', 'patched lazy-core', 'patched lazy-plugin'],
    after: ['built lazy', 'patched lazy-core', 'patched lazy-plugin', 'built never-loaded'],
    core: { core: true, patched: true },
    plugin: { plugin: true, patched: true },
    // a build that throws leaves its container unhooked
    names: ['lazy-core', 'lazy-plugin', 'never-loaded'],
  });
}, 40_000);

it('patches NestJS when the SDK starts after the application already required it, before NestFactory.create', () => {
  const dir = tempDir('late-sdk');
  const script = path.join(dir, 'main.js');
  fs.writeFileSync(
    script,
    `require('reflect-metadata');
const { Injectable, Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core'); // what a main.ts's imports do before its own code runs
const { NodeSDK } = require('@opentelemetry/sdk-node');
const { DiagInstrumentation } = require(${JSON.stringify(root)});
new NodeSDK({ instrumentations: [new DiagInstrumentation()] }).start();
class Unused {}
Injectable()(Unused);
class AppModule {}
Module({ providers: [Unused] })(AppModule);
NestFactory.createApplicationContext(AppModule, { logger: false }).then(async (app) => {
  await app.close();
  const report = JSON.parse(require('node:fs').readFileSync(require('node:path').join(process.env.DIAG_REPORT_DIR, 'diag-report.json'), 'utf8'));
  console.log('RESULT ' + JSON.stringify(report.ghostCandidates.beans));
});
`,
  );
  const { result } = scriptResult([script], dir, {
    ...quietOtelEnv(),
    NODE_PATH: path.join(root, 'node_modules'),
    DIAG_REPORT_DIR: dir,
  });
  expect(result).toEqual(['Unused']);
}, 40_000);

it('leaves Module.prototype.load as it found it when no instrumentation is built, or one with enabled: false', () => {
  const dir = tempDir('module-hooks-off');
  const script = `
    const Module = require('node:module');
    const original = Module.prototype.load;
    const pkg = require(${JSON.stringify(root)});
    const afterImport = Module.prototype.load === original;
    const mode = process.env.CASE;
    if (mode === 'disabled') new pkg.DiagInstrumentation({ enabled: false });
    if (mode === 'enabled') new pkg.DiagInstrumentation();
    const sameTurn = Module.prototype.load === original;
    setImmediate(() => setImmediate(() => {
      console.log('RESULT ' + JSON.stringify({ afterImport, sameTurn, nextTurn: Module.prototype.load === original }));
    }));
  `;
  const run = (mode: string) =>
    scriptResult<{ afterImport: boolean; sameTurn: boolean; nextTurn: boolean }>(['-e', script], dir, {
      ...quietOtelEnv(),
      CASE: mode,
      DIAG_REPORT_DIR: dir,
      DIAG_LOG_LEVEL: 'warn',
    }).result;
  // Imported: timing from the first line, in case an instrumentation follows (docs/startup.md).
  expect(run('none')).toEqual({ afterImport: false, sameTurn: false, nextTurn: true });
  expect(run('disabled')).toEqual({ afterImport: false, sameTurn: true, nextTurn: true });
  expect(run('enabled')).toEqual({ afterImport: false, sameTurn: false, nextTurn: false });
});
