/**
 * An actuator left off says once, at INFO, how to turn it on (issue #38), and the advice works: started as the
 * line says, the application serves the report page at the address the line gave. Real processes, since the
 * instrumentation's hooks need a real `require` (jest replaces it).
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { freePort } from '../../support/ports';
import { startApp, type RunningApp } from '../support/app-process';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const LINE = /^\[diag\] INFO actuator off: set (\w+)=(\w+) .* at (http:\S+?);/;

const offLines = (stdout: string): string[] => stdout.split('\n').filter((l) => l.includes('actuator off'));

describe('the actuator when it is off', () => {
  const apps: RunningApp[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop('SIGKILL')));
  });

  it('says how to turn it on, once, at INFO; started as it says, the report page answers where it said', async () => {
    const port = await freePort();
    const off = await startApp('nest11-cjs', {
      env: { MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: undefined, MANAGEMENT_SERVER_PORT: String(port) },
    });
    apps.push(off);
    const lines = offLines(off.stdout());
    expect(lines).toEqual([
      `[diag] INFO actuator off: set MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE=diag (option actuator.include: ['diag']) ` +
        `to see the live ghost snapshot and the report page at http://127.0.0.1:${port}/actuator/diag/view; ` +
        'the report files are written either way',
    ]);
    expect(off.stderr()).not.toContain('[diag]');
    await off.stop();

    const [, name, value, url] = LINE.exec(lines[0]!)!;
    const on = await startApp('nest11-cjs', { env: { [name!]: value, MANAGEMENT_SERVER_PORT: String(port) } });
    apps.push(on);
    expect(offLines(on.stdout())).toEqual([]);
    const res = await fetch(url!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    await res.arrayBuffer(); // read to its end: a body left unread holds the connection open past the test
    await on.stop();
  });

  it('says it once per process, whatever the number of instrumentations or enable() calls, and names the configured address', () => {
    const script = `
      const { DiagInstrumentation } = require(${JSON.stringify(ROOT)});
      const a = new DiagInstrumentation();
      const b = new DiagInstrumentation({ actuator: { port: 9 } });
      a.disable(); a.enable(); b.disable();
    `;
    const run = spawnSync(process.execPath, ['-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
      env: {
        ...process.env,
        MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: undefined,
        MANAGEMENT_SERVER_PORT: '9464',
        MANAGEMENT_ENDPOINTS_WEB_BASE_PATH: '/manage',
        DIAG_LOG_LEVEL: undefined,
      },
    });
    expect(run.status).toBe(0);
    expect(offLines(run.stdout)).toHaveLength(1);
    expect(offLines(run.stdout)[0]).toContain('at http://127.0.0.1:9464/manage/diag/view;');
  });

  it('says nothing when the actuator is on, nor below INFO', () => {
    const script = `new (require(${JSON.stringify(ROOT)}).DiagInstrumentation)().disable();`;
    const env = (extra: NodeJS.ProcessEnv) =>
      spawnSync(process.execPath, ['-e', script], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, MANAGEMENT_SERVER_PORT: '0', DIAG_LOG_LEVEL: undefined, ...extra },
      });
    const on = env({ MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: 'health' });
    expect(on.status).toBe(0);
    expect(offLines(on.stdout)).toEqual([]);
    const quiet = env({ MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: undefined, DIAG_LOG_LEVEL: 'warn' });
    expect(quiet.status).toBe(0);
    expect(offLines(quiet.stdout + quiet.stderr)).toEqual([]);
  });
});
