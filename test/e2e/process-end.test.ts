/**
 * The ghost report at every ordinary end of a process (src/ghost/process-end.ts): each app is started twice, with the
 * instrumentation and without it (`bare`), ended the same way, and must end the same way — the same exit code,
 * or death by the same signal as its parent sees it — with the report written, once.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  LOADING_CASES,
  getJson,
  launchSpec,
  runToExit,
  scriptResult,
  startApp,
  tempDir,
  type RunningApp,
  type StartOptions,
} from './support/app-process';

const LOADING = LOADING_CASES[0];
const GHOST_REPORT = 'diag-ghost-report.json';

const TRACKING_ENV = {
  DIAG_GHOST_TRACKING_ENABLED: 'true',
  // No periodic rewrite: every write a test counts comes from an end of the process.
  DIAG_REPORT_FLUSH_INTERVAL_MS: '0',
  DIAG_LOG_LEVEL: 'debug',
};

interface Ending {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  reportDir: string;
}

/** Starts an HTTP fixture app, makes one request to `touch`, sends `signal` and waits for the process to end. */
async function endBySignal(signal: NodeJS.Signals, options: StartOptions & { touch: string }): Promise<Ending> {
  let app: RunningApp | undefined;
  try {
    app = await startApp(LOADING, { ...options, env: { ...TRACKING_ENV, ...options.env } });
    expect((await getJson(app.port, options.touch)).status).toBe(200);
    const code = await app.stop(signal);
    return { code, signal: app.proc.signalCode, stdout: app.stdout(), stderr: app.stderr(), reportDir: app.reportDir };
  } finally {
    // a failed expectation above must not leave the process running
    if (app && app.proc.exitCode === null && app.proc.signalCode === null) await app.stop('SIGKILL');
  }
}

/** The same app and ending with and without the instrumentation; asserts both end alike. */
async function compareSignalEnd(signal: NodeJS.Signals, options: StartOptions & { touch: string }): Promise<Ending> {
  const bare = await endBySignal(signal, { ...options, bare: true });
  const instrumented = await endBySignal(signal, options);
  expect({ code: instrumented.code, signal: instrumented.signal }).toEqual({ code: bare.code, signal: bare.signal });
  return instrumented;
}

async function compareRunToEnd(env: NodeJS.ProcessEnv): Promise<Ending> {
  const bare = await runToExit(LOADING, { app: 'ending-app', bare: true, env: { ...TRACKING_ENV, ...env } });
  const instrumented = await runToExit(LOADING, { app: 'ending-app', env: { ...TRACKING_ENV, ...env } });
  expect({ code: instrumented.code, signal: instrumented.signal }).toEqual({ code: bare.code, signal: bare.signal });
  expect(instrumented.stdout).toContain('GREETED hello');
  return instrumented;
}

function ghostReport(ending: Ending): any {
  const file = path.join(ending.reportDir, GHOST_REPORT);
  if (!fs.existsSync(file)) throw new Error(`no ${GHOST_REPORT}\nstdout:\n${ending.stdout}\nstderr:\n${ending.stderr}`);
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

/** Each write of the ghost report logs a line at debug level; a container close logs its own at info. */
function ghostReportWrites(ending: Ending): string[] {
  return ending.stdout
    .split('\n')
    .filter((line) => line.includes(`ghost report written to`) && line.includes(GHOST_REPORT));
}

describe('a NestJS app without enableShutdownHooks()', () => {
  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)(
    'dies by %s as it does without the instrumentation, leaving the report',
    async (signal) => {
      const ending = await compareSignalEnd(signal, { app: 'ending-app', touch: '/use' });
      expect(ending.signal).toBe(signal);
      const report = ghostReport(ending);
      expect(report.touched).toEqual(['EndingController', 'UsedService']);
      expect(report.untouched).toEqual(['IdleService']);
      expect(ghostReportWrites(ending)).toHaveLength(1);
    },
  );
});

describe('a NestJS app with enableShutdownHooks()', () => {
  it("ends by SIGTERM through Nest's own handler; the close writes the report and nothing writes it again", async () => {
    const options = { app: 'ending-app', touch: '/use', env: { ENDING_SHUTDOWN_HOOKS: '1' } };
    const bare = await endBySignal('SIGTERM', { ...options, bare: true });
    expect(bare.signal).toBe('SIGTERM');
    // Nest raises the signal again after its close, into a loop that may have just emptied: a listener of ours
    // left behind could catch it there and let the process exit 0 (it did, more often than not), so try thrice.
    for (let attempt = 0; attempt < 3; attempt++) {
      const ending = await endBySignal('SIGTERM', options);
      expect({ code: ending.code, signal: ending.signal }).toEqual({ code: bare.code, signal: bare.signal });
      expect(ghostReport(ending)).toMatchObject({
        touched: ['EndingController', 'UsedService'],
        untouched: ['IdleService'],
      });
      const writes = ghostReportWrites(ending);
      expect(writes).toHaveLength(1);
      expect(writes[0]).toMatch(/\(close\)$/);
    }
  });
});

describe("an app with its own SIGTERM handler, added after the instrumentation's", () => {
  it('keeps control: its cleanup runs and it exits 3, with the report written at exit', async () => {
    const ending = await compareSignalEnd('SIGTERM', {
      app: 'ending-app',
      touch: '/use',
      env: { ENDING_OWN_SIGTERM: '1' },
    });
    expect(ending.code).toBe(3);
    expect(ending.stdout).toContain('CLEANING UP');
    expect(ghostReport(ending)).toMatchObject({
      touched: ['EndingController', 'UsedService'],
      untouched: ['IdleService'],
    });
    expect(ghostReportWrites(ending)).toHaveLength(1);
  });
});

describe('an app that loads signal-exit, which raises a signal again only when its listeners are alone', () => {
  it("still dies by SIGTERM, signal-exit's callback and the report written", async () => {
    const ending = await compareSignalEnd('SIGTERM', {
      app: 'ending-app',
      touch: '/use',
      env: { ENDING_SIGNAL_EXIT: '1' },
    });
    expect(ending.signal).toBe('SIGTERM');
    expect(ending.stdout).toContain('SIGNAL-EXIT SIGTERM');
    expect(ghostReport(ending)).toMatchObject({
      touched: ['EndingController', 'UsedService'],
      untouched: ['IdleService'],
    });
    expect(ghostReportWrites(ending)).toHaveLength(1);
  });
});

describe('a lazy container (awilix) with no signal handling', () => {
  it('dies by SIGTERM as it does without the instrumentation, leaving the report', async () => {
    const ending = await compareSignalEnd('SIGTERM', { app: 'ending-awilix-app', touch: '/' });
    expect(ending.signal).toBe('SIGTERM');
    expect(ghostReport(ending)).toMatchObject({ framework: 'awilix', touched: ['greeter'], untouched: ['idle'] });
  });
});

describe('an app that ends without a signal', () => {
  it('when the event loop empties: exit code 0, the report written', async () => {
    const ending = await compareRunToEnd({ ENDING: 'natural' });
    expect(ending.code).toBe(0);
    expect(ghostReport(ending)).toMatchObject({
      touched: ['UsedService'],
      untouched: ['EndingController', 'IdleService'],
    });
    expect(ghostReportWrites(ending)).toHaveLength(1);
  });

  it('after app.close(): the close writes the report and the end of the process does not rewrite it', async () => {
    const ending = await compareRunToEnd({ ENDING: 'natural', ENDING_CLOSE: '1' });
    expect(ending.code).toBe(0);
    const closedAt = /^CLOSED (.+)$/m.exec(ending.stdout)?.[1];
    expect(closedAt).toMatch(/^\d{4}-/);
    expect(ghostReport(ending).updatedAt).toBe(closedAt);
    expect(ghostReportWrites(ending)).toHaveLength(1);
    expect(ghostReport(ending)).toMatchObject({
      touched: ['UsedService'],
      untouched: ['EndingController', 'IdleService'],
    });
  });

  it('by process.exit(7): exit code 7, the report written', async () => {
    const ending = await compareRunToEnd({ ENDING: 'exit' });
    expect(ending.code).toBe(7);
    expect(ghostReport(ending)).toMatchObject({
      touched: ['UsedService'],
      untouched: ['EndingController', 'IdleService'],
    });
  });
});

describe('the process listeners', () => {
  const spec = launchSpec(LOADING);
  const count = `['SIGTERM', 'SIGINT', 'SIGHUP', 'beforeExit', 'exit'].map((e) => process.listenerCount(e)).join(',')`;
  const script = `
    const instr = globalThis.__diagInstrumentation;
    const counts = { enabled: ${count} };
    instr.disable();
    counts.disabled = ${count};
    instr.enable();
    counts.reenabled = ${count};
    instr.disable();
    console.log('RESULT ' + JSON.stringify(counts));`;
  const run = (env: NodeJS.ProcessEnv): unknown =>
    scriptResult([spec.args[0]!, spec.args[1]!, '-e', script], spec.cwd, {
      ...env,
      DIAG_REPORT_DIR: tempDir('listeners'),
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_METRICS_EXPORTER: 'none',
    }).result;

  it('are installed with Phase 2 on and removed by disable()', () => {
    expect(run({ DIAG_GHOST_TRACKING_ENABLED: 'true' })).toEqual({
      enabled: '1,1,1,1,1',
      disabled: '0,0,0,0,0',
      reenabled: '1,1,1,1,1',
    });
  });

  it('are never installed with Phase 2 off', () => {
    expect(run({ DIAG_GHOST_TRACKING_ENABLED: 'false' })).toEqual({
      enabled: '0,0,0,0,0',
      disabled: '0,0,0,0,0',
      reenabled: '0,0,0,0,0',
    });
  });
});
