import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

// These start real node processes on the built package (jest's globalSetup builds dist/).
const root = path.resolve(__dirname, '..', '..', '..');
const entry = path.join(root, 'dist', 'sketch', 'index.js');

function node(args: string[], script: string): { stdout: string; stderr: string; status: number | null } {
  if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: run npx tsc -p tsconfig.build.json first`);
  const r = spawnSync(process.execPath, [...args, '-e', script], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

const permissionFlag = process.allowedNodeEnvironmentFlags.has('--permission')
  ? '--permission'
  : '--experimental-permission';
const tryCreate = `
  const { CountMinSketch } = require(${JSON.stringify(entry)});
  try { const s = new CountMinSketch(); s.add('k'); console.log(JSON.stringify({ ok: true, estimate: s.estimate('k') })); }
  catch (e) { console.log(JSON.stringify({ ok: false, name: e.name, code: e.code, reason: e.reason, message: e.message })); }
`;

function lastJson(stdout: string): Record<string, unknown> {
  const line = stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(line) as Record<string, unknown>;
}

describe('native library in a real process', () => {
  it('prints the two INFO lines on the console as SPEC 5 shows them', () => {
    const r = node([], tryCreate);
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    const os = { linux: 'Linux', win32: 'Windows', darwin: 'Mac' }[process.platform as string];
    expect(lines[0]).toBe(`[diag] INFO loading native library for OS: ${os}, Arch: ${process.arch}`);
    expect(lines[1]).toMatch(
      /^\[diag\] INFO Successfully extracted and loaded (libdiagcms\.so|libdiagcms\.dylib|diagcms\.dll) from \S+diag-sketch-\w{6}[\\/](libdiagcms\.so|libdiagcms\.dylib|diagcms\.dll)$/,
    );
    expect(lastJson(r.stdout)).toEqual({ ok: true, estimate: 1 });
  });

  it(`throws UnsatisfiedLinkError (ADDONS_DISABLED, ERR_DLOPEN_DISABLED) under ${permissionFlag} without --allow-addons`, () => {
    const r = node([permissionFlag, '--allow-fs-read=*', '--allow-fs-write=*'], tryCreate);
    const out = lastJson(r.stdout);
    expect(out).toMatchObject({
      ok: false,
      name: 'UnsatisfiedLinkError',
      code: 'ERR_SKETCH_NATIVE_ADDONS_DISABLED',
      reason: 'ADDONS_DISABLED',
    });
    expect(out.message).toContain('ERR_DLOPEN_DISABLED');
    expect(out.message).toContain('--allow-addons');
  });

  (process.allowedNodeEnvironmentFlags.has('--allow-addons') ? it : it.skip)(
    'loads under the permission model once --allow-addons is given',
    () => {
      const r = node([permissionFlag, '--allow-fs-read=*', '--allow-fs-write=*', '--allow-addons'], tryCreate);
      expect(lastJson(r.stdout)).toEqual({ ok: true, estimate: 1 });
    },
  );

  it('frees sketches dropped without close() (FinalizationRegistry backstop): 600 × 1 MiB stay far below 600 MB', () => {
    const script = `
      const { CountMinSketch } = require(${JSON.stringify(entry)});
      require(${JSON.stringify(path.join(root, 'dist', 'shared', 'logger.js'))}).setLogger(null);
      const base = process.memoryUsage().rss;
      const tick = () => new Promise((r) => setImmediate(r));
      (async () => {
        for (let i = 0; i < 600; i++) {
          const s = new CountMinSketch();
          for (let k = 0; k < 2000; k++) s.add('k' + k); // touch pages across the counters
          if (i % 20 === 19) { global.gc(); await tick(); }
        }
        global.gc(); await tick();
        console.log(JSON.stringify({ grownMb: (process.memoryUsage().rss - base) / 1048576 }));
      })();
    `;
    const r = node(['--expose-gc'], script);
    expect(r.status).toBe(0);
    const { grownMb } = lastJson(r.stdout) as { grownMb: number };
    expect(grownMb).toBeLessThan(150);
  });
});
