/**
 * The README's registration snippets run as a user pastes them (issue #38): each block that starts with
 * `// telemetry.js`, `// telemetry.mjs` or `// telemetry.ts` is written to a file as is and started the way its
 * own first line says, in front of the example shop, which must then write its report. The files live inside
 * the package's folder, so `require('diag-instrumentation')` resolves to this very package by its name, as
 * it does from node_modules in the user's application.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { launchSpec, quietOtelEnv, tempDir, waitFor } from './support/app-process';
import { trackChild } from '../support/children';

const ROOT = path.resolve(__dirname, '..', '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The README's code block whose first line names `file`. */
function snippet(file: string): string {
  const blocks = [...README.matchAll(/```(?:js|ts)\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const found = blocks.filter((b) => b.startsWith(`// ${file} `));
  expect(found).toHaveLength(1);
  return found[0]!;
}

/** Starts the example shop with `args` before its main file and waits for its report; returns its output. */
async function runShop(
  args: string[],
  cwd: string,
): Promise<{ out: string; report: { ghostCandidates: { beans: string[] } } }> {
  const reportDir = tempDir('readme-report');
  const proc = trackChild(
    spawn(process.execPath, [...args, path.join(cwd, 'main.js')], {
      cwd,
      env: { ...process.env, ...quietOtelEnv(), DIAG_REPORT_DIR: reportDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  try {
    await waitFor(
      async () => out.includes('LISTENING ') && fs.existsSync(path.join(reportDir, 'diag-report.json')),
      30_000,
    );
  } catch (err) {
    throw new Error(`${String(err)}\n${out}`);
  } finally {
    proc.kill('SIGKILL');
  }
  return { out, report: JSON.parse(fs.readFileSync(path.join(reportDir, 'diag-report.json'), 'utf8')) };
}

describe("the README's registration snippets, as pasted", () => {
  let dir: string;
  beforeAll(() => {
    fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
    dir = fs.mkdtempSync(path.join(ROOT, '.tmp', 'readme-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('telemetry.js (CommonJS) with node --require', async () => {
    const code = snippet('telemetry.js');
    expect(code).toMatch(/start with: node --require \.\/telemetry\.js dist\/main\.js/);
    fs.writeFileSync(path.join(dir, 'telemetry.js'), code);
    const { report } = await runShop(['--require', path.join(dir, 'telemetry.js')], launchSpec('nest11-cjs').cwd);
    expect(report.ghostCandidates.beans).toContain('LegacyReportService');
  });

  it('telemetry.mjs (ES modules) with node --import', async () => {
    const code = snippet('telemetry.mjs');
    expect(code).toMatch(/start with: node --import \.\/telemetry\.mjs dist\/main\.js/);
    fs.writeFileSync(path.join(dir, 'telemetry.mjs'), code);
    const { report } = await runShop(['--import', path.join(dir, 'telemetry.mjs')], launchSpec('nest12-esm').cwd);
    expect(report.ghostCandidates.beans).toContain('LegacyReportService');
  });

  it('telemetry.ts compiles with the app to CommonJS and runs with node --require', async () => {
    const code = snippet('telemetry.ts');
    expect(code).toMatch(/start with: node --require \.\/dist\/telemetry\.js dist\/main\.js/);
    fs.writeFileSync(path.join(dir, 'telemetry.ts'), code);
    const tsc = spawnSync(
      process.execPath,
      [
        require.resolve('typescript/bin/tsc'),
        '--module',
        'node16',
        '--moduleResolution',
        'node16',
        '--target',
        'es2022',
        '--types',
        'node',
        '--strict',
        '--rootDir',
        dir,
        '--outDir',
        path.join(dir, 'dist'),
        path.join(dir, 'telemetry.ts'),
      ],
      { encoding: 'utf8' },
    );
    expect(tsc.stdout + tsc.stderr).toBe('');
    const { report } = await runShop(
      ['--require', path.join(dir, 'dist', 'telemetry.js')],
      launchSpec('nest11-cjs').cwd,
    );
    expect(report.ghostCandidates.beans).toContain('LegacyReportService');
  });
});
