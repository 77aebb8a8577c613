import { execFileSync, spawn } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
import { tempDir } from '../../support/temp';
import { trackChild } from '../../support/children';

/**
 * Whole-process behaviour: the actuator must never be what keeps the host alive, and a port in use must not
 * change how the host exits. The actuator is compiled on its own into a temporary directory, so this test does
 * not depend on the rest of the package building.
 */

const root = path.resolve(__dirname, '../../..');
let outDir: string;

beforeAll(() => {
  outDir = tempDir('actuator');
  execFileSync(
    process.execPath,
    [
      require.resolve('typescript/bin/tsc'),
      path.join(root, 'src/actuator/index.ts'),
      '--outDir',
      outDir,
      '--rootDir',
      path.join(root, 'src'),
      '--target',
      'ES2022',
      '--module',
      'commonjs',
      '--esModuleInterop',
      '--strict',
      '--skipLibCheck',
      '--types',
      'node',
    ],
    { cwd: root, stdio: 'pipe' },
  );
}, 60_000);

function child(script: string): {
  proc: ReturnType<typeof spawn>;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; ms: number }>;
} {
  const started = Date.now();
  const proc = trackChild(
    spawn(process.execPath, ['-e', script], {
      env: {
        ...process.env,
        NODE_PATH: path.join(root, 'node_modules'),
        ACTUATOR: path.join(outDir, 'actuator/index.js'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let out = '';
  let err = '';
  proc.stdout!.on('data', (c) => (out += c));
  proc.stderr!.on('data', (c) => (err += c));
  const exit = new Promise<{ code: number | null; ms: number }>((resolve) =>
    proc.on('exit', (code) => resolve({ code, ms: Date.now() - started })),
  );
  return { proc, stdout: () => out, stderr: () => err, exit };
}

async function waitFor(read: () => string, pattern: RegExp, ms = 10_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = read().match(pattern);
    if (m) return m;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; got: ${read()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const CONFIG = `{ include: ['*'], exclude: [], basePath: '/actuator', address: '127.0.0.1', authToken: undefined }`;

it('does not keep the process alive, even with a client holding a keep-alive connection open', async () => {
  // The app's only own work is a 1.5 s timer; keep-alive and idle timeouts are far longer, so only unref'd
  // handles let the process end on time.
  const c = child(`
    const { startActuator, actuatorSources } = require(process.env.ACTUATOR);
    startActuator({ ...${CONFIG}, port: 0 }, actuatorSources({}), { keepAliveTimeoutMs: 60000, idleSocketTimeoutMs: 120000 })
      .then((h) => { console.log('PORT=' + h.port); setTimeout(() => console.log('app work done'), 1500); });
  `);
  try {
    const port = Number((await waitFor(c.stdout, /PORT=(\d+)/))[1]);
    const socket = net.connect(port, '127.0.0.1');
    let response = '';
    socket.on('data', (d) => (response += d));
    socket.on('error', () => undefined);
    socket.write('GET /actuator/health HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    await waitFor(() => response, /\{"status":"UP"\}/);
    expect(response).toMatch(/Connection: keep-alive/i);
    const { code, ms } = await c.exit;
    socket.destroy();
    expect(code).toBe(0);
    expect(c.stdout()).toMatch(/app work done/);
    expect(ms).toBeLessThan(10_000);
  } finally {
    c.proc.kill();
  }
}, 30_000);

it('a port in use is a warning: the host keeps running and exits normally', async () => {
  const holder = net.createServer();
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
  const port = (holder.address() as net.AddressInfo).port;
  const c = child(`
    const http = require('node:http');
    const { startActuator, actuatorSources } = require(process.env.ACTUATOR);
    const app = http.createServer((q, r) => r.end('app')).listen(0, '127.0.0.1', async () => {
      const h = await startActuator({ ...${CONFIG}, port: ${port} }, actuatorSources({}));
      const res = await fetch('http://127.0.0.1:' + app.address().port + '/');
      console.log('actuator=' + String(h) + ' app=' + (await res.text()));
      app.close();
    });
  `);
  try {
    const { code } = await c.exit;
    expect(code).toBe(0);
    expect(c.stdout()).toMatch(/actuator=undefined app=app/);
    expect(c.stderr()).toMatch(new RegExp(`WARN actuator not started: 127\\.0\\.0\\.1:${port} is already in use`));
    expect(c.stderr()).not.toMatch(/Unhandled|uncaught|\n\s+at /i);
  } finally {
    c.proc.kill();
    await new Promise((r) => holder.close(r));
  }
}, 30_000);
