/**
 * The joint view of several services of one repository (issue #44 §6), on a real Redis: the two applications of a
 * monorepo (test/fixtures/apps/mono-app: apps/api and apps/admin, both registering libs/shared) started as
 * processes, each writing to one ledger under its own service name, called over HTTP. A shared class used in one
 * and never used in the other reads "remove the registration" there, not "delete the class"; a class of one
 * application's own, dead there, reads "delete the class". `ledger --service mono-api,mono-admin` in text and JSON.
 */
import * as path from 'node:path';
import { describeWithService } from '../../support/services';
import { freePort } from '../../support/ports';
import { RedisServer, until } from '../fleet/harness';
import { launchSpec, startSpec, type RunningApp } from '../support/app-process';
import { ledgerCli } from './support';

/** The services' evidence window: short, so that a class never called reads never-touched within the test. */
const WINDOW_MS = 1_000;

interface JointClass {
  className: string;
  source?: string;
  services: Record<string, { bean: string; verdict: string }>;
  action: string;
  where: string[];
  usedIn: string[];
  why: string;
}

describeWithService('redis', 'the joint ledger of a monorepo’s two services (ledger --service a,b)', (bin) => {
  const apps: RunningApp[] = [];
  let redis: RedisServer | undefined;

  /** One application of the monorepo, started from its own main script, writing to the ledger as `service`. */
  async function start(app: 'api' | 'admin', service: string, url: string): Promise<RunningApp> {
    const spec = launchSpec('nest11-cjs', 'mono-app');
    const started = await startSpec(
      { ...spec, args: [...spec.args.slice(0, 2), path.join('apps', app, 'src', 'main.js')] },
      `mono-${app}`,
      {
        env: {
          OTEL_SERVICE_NAME: service,
          DIAG_GHOST_TRACKING_ENABLED: 'true',
          DIAG_GHOST_TRACKING_LEDGER_URL: url,
          DIAG_GHOST_TRACKING_LEDGER_PUSH_INTERVAL_MS: '100',
          DIAG_GHOST_TRACKING_LEDGER_HEARTBEAT_INTERVAL_MS: '300',
          // The services' thresholds, as their processes state them: the CLI is told none.
          DIAG_GHOST_TRACKING_LEDGER_MIN_DAYS: String(WINDOW_MS / 86_400_000),
          DIAG_GHOST_TRACKING_LEDGER_MIN_PROCESS_HOURS: '0',
        },
      },
    );
    apps.push(started);
    return started;
  }

  afterAll(async () => {
    for (const a of apps.splice(0)) await a.stop('SIGKILL');
    await redis?.stop();
  });

  it("reads a shared class used next door as 'remove the registration', an app's own dead class as 'delete the class'", async () => {
    redis = new RedisServer(bin, await freePort(), 'joint-pw', []);
    await redis.start();
    const url = redis.url;
    const [api, admin] = await Promise.all([start('api', 'mono-api', url), start('admin', 'mono-admin', url)]);
    // apps/api uses Clock (GET /time), apps/admin uses PushSender (POST /push); neither uses the other one.
    expect((await fetch(`http://127.0.0.1:${api.port}/time`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${admin.port}/push`, { method: 'POST' })).status).toBe(201);

    const joint = await until('both services judged, with their uses, in one ledger', 20_000, async () => {
      const run = ledgerCli(url, ['--format', 'json'], undefined, 'mono-api,mono-admin');
      try {
        const answer = JSON.parse(run.stdout) as { services: string[]; classes: JointClass[] };
        const push = answer.classes.find((c) => c.className === 'PushSender');
        const clock = answer.classes.find((c) => c.className === 'Clock');
        return push?.action === 'remove-registration' && clock?.action === 'remove-registration' ? answer : undefined;
      } catch {
        return undefined;
      }
    });
    expect(joint.services).toEqual(['mono-api', 'mono-admin']);
    const byName = (name: string) => joint.classes.find((c) => c.className === name)!;
    // the shared library's classes: one registration to remove in each application, the class kept
    expect(byName('PushSender')).toMatchObject({
      source: 'libs/shared/src/shared.module.js',
      services: {
        'mono-api': { bean: 'PushSender', verdict: 'never-touched' },
        'mono-admin': { bean: 'PushSender', verdict: 'in-use' },
      },
      action: 'remove-registration',
      where: ['mono-api'],
      usedIn: ['mono-admin'],
    });
    expect(byName('Clock')).toMatchObject({
      action: 'remove-registration',
      where: ['mono-admin'],
      usedIn: ['mono-api'],
    });
    // apps/api's own dead class has no sibling to be used by: the class itself goes
    expect(byName('LocalDraft')).toMatchObject({
      services: { 'mono-api': { verdict: 'never-touched' } },
      action: 'delete-class',
      where: ['mono-api'],
    });
    // the controllers each application calls are kept
    expect(byName('TimeController').action).toBe('keep');
    expect(byName('PushController').action).toBe('keep');

    // For people: the action and why, one line per class; exit 1 while there is something to act on.
    const text = ledgerCli(url, [], undefined, 'mono-api,mono-admin');
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^joint ghost ledger of mono-api, mono-admin$/m);
    expect(text.stdout).toContain(
      '  remove-registration PushSender (libs/shared/src/shared.module.js): registered in mono-api and never used there, ' +
        'used in mono-admin: remove the registration, not the class',
    );
    expect(text.stdout).toMatch(
      /^ {2}delete-class {8}LocalDraft \(apps\/api\/src\/main\.js\): never used in mono-api/m,
    );
    expect(text.stdout).not.toContain('joint-pw');
    // SARIF is one service's: asked of the joint view, a clear error (exit 2), never text where SARIF was expected
    const sarif = ledgerCli(url, ['--format', 'sarif'], undefined, 'mono-api,mono-admin');
    expect(sarif.code).toBe(2);
    expect(sarif.stdout).toBe('');
    expect(sarif.stderr).toMatch(/the joint view \(--service a,b\) has no SARIF/);
    // a service gone silent: the view is printed and says so, and the gate fails as for one silent service (exit 2)
    await admin.stop('SIGTERM');
    const quiet = await until('mono-admin silent', 15_000, async () => {
      const run = ledgerCli(url, [], undefined, 'mono-api,mono-admin');
      return run.code === 2 ? run : undefined;
    });
    expect(quiet.stdout).toMatch(/^ {2}WARNING: mono-admin has gone silent: /m);
    expect(quiet.stderr).toMatch(/mono-admin has gone silent: the joint view is printed/);
  }, 60_000);
});
