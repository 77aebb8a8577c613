/**
 * The published artefact is what users run: pack the package, install the tarball into a fresh application
 * next to NestJS and the OpenTelemetry SDK from the registry, and start the example shop against it.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { quietOtelEnv, tempDir } from './support/app-process';
import { trackChild } from '../support/children';

const root = path.resolve(__dirname, '..', '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function versionOf(pkg: string): string {
  return JSON.parse(fs.readFileSync(path.join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version;
}

describe('the packed tarball', () => {
  let appDir: string;
  let installOutput = '';

  beforeAll(() => {
    const packDir = tempDir('pack');
    // --ignore-scripts: prepack's clean rebuild of dist/ would pull it from under the other end-to-end tests
    // running in parallel; the global setup has just built it from the same sources.
    const out = execFileSync(npm, ['pack', '--silent', '--ignore-scripts', '--pack-destination', packDir], {
      cwd: root,
      encoding: 'utf8',
    });
    const tarball = path.join(packDir, out.trim().split('\n').pop()!);
    appDir = tempDir('fresh-app');
    const deps: Record<string, string> = { 'diag-instrumentation': `file:${tarball}` };
    for (const pkg of [
      '@nestjs/core',
      '@nestjs/common',
      '@nestjs/platform-express',
      '@nestjs/schedule',
      '@nestjs/event-emitter',
      '@nestjs/passport',
      'passport',
      'passport-local',
      'reflect-metadata',
      'rxjs',
      '@opentelemetry/api',
      '@opentelemetry/instrumentation',
      '@opentelemetry/sdk-node',
    ]) {
      deps[pkg] = versionOf(pkg);
    }
    fs.writeFileSync(
      path.join(appDir, 'package.json'),
      JSON.stringify({ name: 'fresh-app', private: true, dependencies: deps }),
    );
    // npm's own defaults (npm 11: no dependency's install script runs unless approved), as a user installs.
    const install = spawnSync(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: appDir,
      encoding: 'utf8',
    });
    if (install.status !== 0) throw new Error(`npm install failed:\n${install.stdout}\n${install.stderr}`);
    installOutput = `${install.stdout}\n${install.stderr}`;
    fs.cpSync(path.join(root, 'test', 'fixtures', 'nest11', 'out-cjs', 'ghost-app'), path.join(appDir, 'app'), {
      recursive: true,
    });
    fs.copyFileSync(
      path.join(root, 'test', 'fixtures', 'telemetry', 'telemetry.cjs'),
      path.join(appDir, 'telemetry.cjs'),
    );
  }, 240_000);

  it('installs with no word from npm about this package, its native library loading with no install script run', () => {
    expect(installOutput).not.toMatch(/diag-instrumentation/);
    // koffi's own script (it rebuilds what koffi ships prebuilt) may be listed as not approved: never run, not needed.
    for (const line of installOutput.split('\n').filter((l) => /warn|ERR/i.test(l))) {
      expect(line).toMatch(/install-scripts|^npm warn\s*$|koffi/);
    }
    expect(fs.existsSync(path.join(appDir, 'node_modules', 'koffi', 'build'))).toBe(false);
  });

  it('ships dist, the sketch entry point and the verified native binaries, but no tests or sources of its own', () => {
    const installed = path.join(appDir, 'node_modules', 'diag-instrumentation');
    expect(fs.existsSync(path.join(installed, 'dist', 'index.js'))).toBe(true);
    expect(fs.existsSync(path.join(installed, 'dist', 'index.d.ts'))).toBe(true);
    expect(fs.existsSync(path.join(installed, 'native-bin', 'SHA256SUMS'))).toBe(true);
    expect(fs.existsSync(path.join(installed, 'test'))).toBe(false);
    expect(fs.existsSync(path.join(installed, 'src'))).toBe(false);
    const probe = execFileSync(
      process.execPath,
      [
        '-e',
        "const s = require('diag-instrumentation/sketch'); const c = new s.CountMinSketch(); c.add('k'); console.log(c.estimate('k'), c.memoryBytes); c.close();",
      ],
      { cwd: appDir, encoding: 'utf8', env: { ...process.env, DIAG_LOG_LEVEL: 'warn' } },
    );
    expect(probe.trim()).toBe('1 1048576');
  });

  it('runs a NestJS app under the installed instrumentation and writes the report', async () => {
    const reportDir = tempDir('packed-report');
    const proc = trackChild(
      spawn(process.execPath, ['--require', path.join(appDir, 'telemetry.cjs'), 'main.js'], {
        cwd: path.join(appDir, 'app'),
        env: { ...process.env, ...quietOtelEnv(), DIAG_PACKAGE: 'diag-instrumentation', DIAG_REPORT_DIR: reportDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => (out += d));
    proc.stderr!.on('data', (d: Buffer) => (out += d));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`app did not start:\n${out}`)), 30_000);
        // Listening, and the start-up analysis (which runs just after bootstrap) has written its report.
        const ready = (): void => {
          if (out.includes('LISTENING ') && /report written to/.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        };
        proc.stdout!.on('data', ready);
        proc.stderr!.on('data', ready);
        proc.once('exit', (code) => reject(new Error(`exited ${code}:\n${out}`)));
      });
      // The preload resolved the installed copy, not this repository.
      expect(out).not.toMatch(/Cannot find module/);
      const report = JSON.parse(fs.readFileSync(path.join(reportDir, 'diag-report.json'), 'utf8'));
      expect(report.ghostCandidates.beans).toContain('LegacyReportService');
      expect(report.container.name).toBe('@nestjs/core');
      // The bin, as a CI step would run it: npx resolves the installed package's `diag-instrumentation`.
      const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
      const checked = spawnSync(
        npx,
        ['--no-install', 'diag-instrumentation', 'check', path.join(reportDir, 'diag-report.json')],
        {
          cwd: appDir,
          encoding: 'utf8',
        },
      );
      expect(checked.status).toBe(1);
      expect(checked.stdout).toMatch(/^no baseline given: \d+ ghost candidates?:/m);
    } finally {
      proc.kill('SIGTERM');
    }
  });
});
