// What the container examples (examples/inversify, examples/tsyringe, examples/awilix) have in common for their
// end-to-end tests: each starts the same way, answers /identity alike and prints the same start-up line.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getJson, startApp, waitFor, type LoadingCase, type RunningApp } from '../support/app-process';

/** Starts a container example with Phase 2 and the actuator on; resolves once the actuator listens too. */
export async function startExample(loading: LoadingCase, app: string, root?: string): Promise<RunningApp> {
  const running = await startApp(loading, {
    app,
    ...(root !== undefined ? { root } : {}),
    env: {
      DIAG_GHOST_TRACKING_ENABLED: 'true',
      // One run is evidence enough here, so that a never-called method reads never-touched.
      DIAG_GHOST_TRACKING_LEDGER_MIN_DAYS: '0',
      DIAG_GHOST_TRACKING_LEDGER_MIN_PROCESS_HOURS: '0',
      MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: 'diag',
      MANAGEMENT_SERVER_PORT: '0',
    },
  });
  // the actuator starts beside the app, not before it
  await waitFor(async () => /actuator listening/.test(running.stdout()));
  return running;
}

/** The container hands out the same objects with the instrumentation on: singleton, class, prototype. */
export async function expectIdentityPreserved(app: RunningApp): Promise<void> {
  expect((await getJson(app.port, '/identity')).body).toEqual({
    sameSingleton: true,
    instanceOf: true,
    constructorIsClass: true,
    protoIsClassProto: true,
    config: 'hello',
  });
  // what the app resolved before ready worked: the config and the clock's first tick
  expect(app.stdout()).toMatch(/STARTED hello 17000000000\d\d/);
}

/** Stops the app as a deployment would and reads what it wrote at exit. */
export async function ghostReportAtExit(app: RunningApp): Promise<any> {
  await app.stop('SIGTERM');
  return app.readReport('diag-ghost-report.json');
}

/**
 * Method depth on a lazy container (issue #43 §4): the singleton OrdersRepository, resolved and called by `GET
 * /orders`, has its methods judged one by one, the called one in use and the dead one never-touched, each at its
 * line in the file the class was loaded from (the examples are built without source maps).
 */
export function expectMethodVerdicts(app: RunningApp, ghosts: any, bean = 'OrdersRepository'): void {
  const repository = ghosts.verdicts.find((v: any) => v.name === bean);
  expect(repository.verdict).toBe('in-use');
  const methods = Object.fromEntries(repository.methods.map((m: any) => [m.name, m.verdict]));
  expect(methods).toEqual({ list: 'in-use', archive: 'never-touched' });
  const archive = repository.methods.find((m: any) => m.name === 'archive');
  const file = archive.source.file as string;
  expect(file).toMatch(/^services\.m?js$/);
  const lines = fs.readFileSync(path.join(app.cwd, file), 'utf8').split('\n');
  expect(lines[archive.source.line - 1]).toMatch(/^\s*archive\(\) \{/);
}
