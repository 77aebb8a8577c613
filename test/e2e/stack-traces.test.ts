/**
 * What an application's own stack traces show with Phase 2 on (#44, point 7). A route handler is captured by
 * Nest's router at start-up, so it keeps the first-touch wrapper for good: every error it throws passes
 * through that wrapper's forwarding call. The stack the application logs must show its own frames exactly as
 * without the instrumentation, plus at most one frame of ours per captured wrapper, in the file that says it
 * forwards (dist/ghost/tracking/forwarding-wrapper.js), never the bookkeeping of first-touch.js; a service
 * method called the ordinary way shows none of ours once it has been called.
 */
import { getJson, LOADING_CASES, startApp, type RunningApp } from './support/app-process';

const TRACKING = { DIAG_GHOST_TRACKING_ENABLED: 'true' };

/** A frame of this package: its compiled code, wherever it is installed. */
const OURS = /[\\/]dist[\\/](?:ghost|adapters|instrumentation|patching|shared|telemetry)[\\/]/;
const FORWARDING = /[\\/]dist[\\/]ghost[\\/]tracking[\\/]forwarding-wrapper\.js:\d+:\d+\)$/;
/** A frame of the fixture application itself. */
const APP = /[\\/]stack-app[\\/]main\.js:\d+:\d+\)$/;

function frames(stack: string): string[] {
  return stack
    .split('\n')
    .slice(1)
    .map((line) => line.trim());
}

/** The frames down to the framework's first one: the application's and ours, without Nest's. */
function top(stack: string): string[] {
  const all = frames(stack);
  const end = all.findIndex((f) => !OURS.test(f) && !APP.test(f));
  return end < 0 ? all : all.slice(0, end);
}

/** `at StackController.sync (/…/main.js:51:29)` → `StackController.sync`. */
const fnName = (frame: string): string => /^at (\S+) /.exec(frame)?.[1] ?? frame;

async function stackOf(app: RunningApp, route: string): Promise<string> {
  const answer = await getJson(app.port, `/stack/${route}`);
  expect(answer.status).toBe(500);
  return answer.body.stack as string;
}

const ROUTES = ['sync', 'async', 'twin'] as const;
/** The wrappers a route's first call crosses, routes called in this order: `charge` is first called by `sync`. */
const FIRST_CROSSED: Record<(typeof ROUTES)[number], string[]> = {
  sync: ['BillingService.charge', 'StackController.sync'],
  async: ['StackController.later'],
  twin: ['Twin.fail', 'StackController.twinFails'],
};

describe.each(LOADING_CASES)('stack traces of the application with tracking on (%s)', (loading) => {
  let bare: RunningApp;
  let tracked: RunningApp;
  const untracked = new Map<string, string>();
  const first = new Map<string, string>();
  const later = new Map<string, string>();

  beforeAll(async () => {
    [bare, tracked] = await Promise.all([
      startApp(loading, { app: 'stack-app', bare: true }),
      startApp(loading, { app: 'stack-app', env: TRACKING }),
    ]);
    for (const route of ROUTES) {
      untracked.set(route, await stackOf(bare, route));
      first.set(route, await stackOf(tracked, route));
      await stackOf(tracked, route);
      later.set(route, await stackOf(tracked, route));
    }
  });
  afterAll(async () => {
    await Promise.all([bare?.stop('SIGKILL'), tracked?.stop('SIGKILL')]);
  });

  it.each(ROUTES)(
    'after the first call, /stack/%s shows the application frames of an untracked run and one forwarding frame',
    (route) => {
      const stack = later.get(route)!;
      const ours = frames(stack).filter((f) => OURS.test(f));
      expect(ours).toHaveLength(1);
      expect(ours[0]).toMatch(FORWARDING);
      const shown = top(stack);
      const app = shown.filter((f) => APP.test(f));
      expect(app).toEqual(top(untracked.get(route)!));
      // Right below the handler it forwards to, under the handler's own name: the router's captured call.
      const handler = app[app.length - 1]!;
      expect(shown[shown.length - 1]).toBe(ours[0]);
      expect(fnName(ours[0]!)).toBe(fnName(handler));
      expect(shown.indexOf(ours[0]!)).toBe(shown.indexOf(handler) + 1);
    },
  );

  it('never shows the first-touch bookkeeping, not even on a first call, only one forwarding frame per wrapper crossed', () => {
    for (const route of ROUTES) {
      for (const stack of [first.get(route)!, later.get(route)!]) {
        expect(stack).not.toMatch(/first-touch\.js/);
        for (const frame of frames(stack).filter((f) => OURS.test(f))) expect(frame).toMatch(FORWARDING);
      }
      // A first call crosses one wrapper per method called for the first time: the handler's captured one and,
      // on the first route to reach it, the service method's (then still on its prototype). One frame each,
      // under the name of the method it forwards to.
      expect(
        frames(first.get(route)!)
          .filter((f) => OURS.test(f))
          .map(fnName),
      ).toEqual(FIRST_CROSSED[route]);
    }
  });
});
