/**
 * A production build bundled and minified (esbuild --bundle --minify, as webpack + Terser would): the reports name
 * the beans and their files through the bundle's source map, and say once, with the fix, when no map helps
 * (issue #44). The bundle is made from the compiled shapes app (its decorator metadata already emitted by tsc).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getJson, quietOtelEnv, tempDir } from './support/app-process';

const root = path.resolve(__dirname, '..', '..');
const compiled = path.join(root, 'test/fixtures/nest11/out-cjs/shapes-app/main.js');

function bundle(dir: string, sourcemap: boolean): string {
  const out = path.join(dir, 'main.js');
  require('esbuild').buildSync({
    entryPoints: [compiled],
    bundle: true,
    minify: true,
    platform: 'node',
    format: 'cjs',
    packages: 'external',
    outfile: out,
    sourcemap,
    logLevel: 'silent',
  });
  return out;
}

async function run(main: string): Promise<{ report: any; ghosts: any; stderr: string }> {
  const reportDir = tempDir('report');
  const proc = spawn(process.execPath, ['--require', path.join(root, 'test/fixtures/telemetry/telemetry.cjs'), main], {
    cwd: path.dirname(main),
    env: {
      ...process.env,
      ...quietOtelEnv(),
      NODE_PATH: path.join(root, 'node_modules'),
      DIAG_REPORT_DIR: reportDir,
      DIAG_GHOST_TRACKING_ENABLED: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  try {
    const deadline = Date.now() + 30_000;
    while (!/LISTENING \d+/.test(out) || !fs.existsSync(path.join(reportDir, 'diag-report.json'))) {
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`bundle did not start:\n${out}\n${err}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const port = Number(/LISTENING (\d+)/.exec(out)![1]);
    expect((await getJson(port, '/shapes')).status).toBe(200);
  } finally {
    proc.kill('SIGTERM');
    await exited;
  }
  const read = (f: string) => JSON.parse(fs.readFileSync(path.join(reportDir, f), 'utf8'));
  return { report: read('diag-report.json'), ghosts: read('diag-ghost-report.json'), stderr: err };
}

describe('a minified bundle', () => {
  it("names beans, modules and files through the bundle's source map, in every report", async () => {
    const { report, ghosts, stderr } = await run(bundle(tempDir('bundle'), true));
    // The repositories are anonymous subclasses in the bundle, three of one body (`k=class extends M{}`), told
    // apart by the variable each is bound to.
    expect(report.ghostCandidates.beans).toEqual([
      'ArchiveRepository',
      'ArchiveService',
      'AuditRepository',
      'AuditTrailMiddleware',
      'LEGACY_MESSAGES',
      'SMS_CONFIG_PROVIDER',
      'TimingInterceptor',
      'TrimPipe',
      'UserStatusGuard',
    ]);
    const node = (name: string) => report.graph.nodes.find((n: any) => n.name === name);
    expect(node('UserStatusGuard')).toMatchObject({ module: 'ShapesModule', className: 'UserStatusGuard' });
    expect(node('UserStatusGuard').source).toMatch(/shapes-app\/main\.js$/);
    expect(node('RouteGuard')).toBeDefined();
    expect(node('CheckInRepository')).toMatchObject({ className: 'CheckInRepository' });
    expect(node('CheckInModule/CheckInModule#2').source).toMatch(/check-in-admin\/check-in\.module\.js$/);
    expect(ghosts.untouched).toEqual(expect.arrayContaining(['UserStatusGuard', 'TrimPipe']));
    expect(ghosts.touched).toEqual(expect.arrayContaining(['APP_GUARD(UserStatusGuard)', 'RouteGuard', 'Messages']));
    const verdict = ghosts.verdicts.find((v: any) => v.name === 'UserStatusGuard');
    expect(verdict.source).toMatch(/shapes-app\/main\.js$/);
    expect(stderr).not.toMatch(/minified names/);
  }, 60_000);

  it('says once, with the fix, when names look minified and no map gives them back', async () => {
    const { report, stderr } = await run(bundle(tempDir('bundle'), false));
    const warnings = stderr.split('\n').filter((l) => l.includes('minified names'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/keep_classnames/);
    expect(report.ghostCandidates.beans).not.toContain('UserStatusGuard');
  }, 60_000);
});
