/**
 * The ghost detector where NestJS teams really run it: on Nest's Fastify platform, beside the contrib HTTP and
 * NestJS instrumentations in one NodeSDK, and under an application's own `instrument.instanceDecorator`.
 * Each is the orders fixture (test/fixtures/apps/orders) started as a real process; the verdicts must be the
 * ones it gives on plain Express, and the application must answer exactly as without the instrumentation.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { actuatorPort, getJson, startApp, tempDir, type LoadingCase, type RunningApp } from './support/app-process';

// @nestjs/platform-fastify and the contrib NestJS instrumentation (0.70, Nest < 12) are the root's own.
const LOADING = 'nest11-cjs';

const PHASE2_WITH_ACTUATOR = {
  DIAG_GHOST_TRACKING_ENABLED: 'true',
  MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: 'health,diag,startup',
  MANAGEMENT_SERVER_PORT: '0',
};

/** What every variant of the orders app must answer. */
async function exercise(app: RunningApp): Promise<Record<string, unknown>> {
  return {
    list: (await getJson(app.port, '/orders')).body,
    one: (await getJson(app.port, '/orders/2')).body,
    lookup: (await getJson(app.port, '/orders/lookup')).body,
  };
}

const EXPECTED_ANSWERS = {
  list: [
    { id: 1, price: 10 },
    { id: 2, price: 20 },
  ],
  one: { id: 2, price: 20 },
  lookup: { answer: 42 },
};

// LookupService was a candidate until GET /orders/lookup looked it up through ModuleRef (verdict looked-up).
const EXPECTED_CANDIDATES = ['UnusedService'];
const EXPECTED_TOUCHED = ['LookupService', 'OrdersController', 'OrdersService', 'PriceService'];
const EXPECTED_UNTOUCHED = ['ReminderService', 'UnusedService'];

interface Verdicts {
  answers: Record<string, unknown>;
  candidates: string[];
  liveTouched: string[];
  liveUntouched: string[];
  health: unknown;
  startup: any;
  reportTouched: string[];
  reportUntouched: string[];
  /** Exit code, or the signal: enableShutdownHooks re-raises SIGTERM once the hooks ran. */
  exit: number | string | null;
}

async function verdicts(app: string): Promise<Verdicts> {
  const running = await startApp(LOADING, { app, env: PHASE2_WITH_ACTUATOR });
  try {
    const answers = await exercise(running);
    const port = actuatorPort(running);
    const live = (await getJson(port, '/actuator/diag/ghosts')).body;
    const diag = (await getJson(port, '/actuator/diag')).body;
    const health = (await getJson(port, '/actuator/health')).body;
    const startup = (await getJson(port, '/actuator/startup')).body;
    const exitCode = await running.stop('SIGTERM');
    const report = running.readReport('diag-ghost-report.json');
    expect(running.readReport().ghostCandidates.beans).toEqual(diag.ghostCandidates.beans);
    return {
      answers,
      candidates: [...diag.ghostCandidates.beans].sort(),
      liveTouched: [...live.touched].sort(),
      liveUntouched: [...live.untouched].sort(),
      health,
      startup,
      reportTouched: [...report.touched].sort(),
      reportUntouched: [...report.untouched].sort(),
      exit: running.proc.signalCode ?? exitCode,
    };
  } finally {
    await running.stop('SIGKILL');
  }
}

describe('Nest on Fastify: Phase 1, Phase 2 and the actuator', () => {
  let express: Verdicts;
  let fastify: Verdicts;

  beforeAll(async () => {
    [express, fastify] = await Promise.all([verdicts('orders-app'), verdicts('fastify-app')]);
  }, 90_000);

  it('answers the routes as the Express app does, through tracked controllers', () => {
    expect(fastify.answers).toEqual(EXPECTED_ANSWERS);
    expect(express.answers).toEqual(EXPECTED_ANSWERS);
  });

  it('lists the same ghost candidates (Phase 1)', () => {
    expect(fastify.candidates).toEqual(EXPECTED_CANDIDATES);
    expect(express.candidates).toEqual(EXPECTED_CANDIDATES);
  });

  it('serves the live snapshot on the actuator with the same touched and untouched beans (Phase 2)', () => {
    expect(fastify.health).toEqual({ status: 'UP' });
    expect(fastify.liveTouched).toEqual(EXPECTED_TOUCHED);
    expect(fastify.liveUntouched).toEqual(EXPECTED_UNTOUCHED);
    expect(express.liveTouched).toEqual(EXPECTED_TOUCHED);
    expect(express.liveUntouched).toEqual(EXPECTED_UNTOUCHED);
  });

  it("serves the start-up timeline in Spring Boot's shape: a step per module and per bean, parents first", () => {
    for (const { startup } of [express, fastify]) {
      const events: any[] = startup.timeline.events;
      expect(Date.parse(startup.timeline.startTime)).toBeGreaterThan(0);
      const byId = new Map(events.map((e) => [e.startupStep.id, e]));
      const tags = (e: any) => Object.fromEntries(e.startupStep.tags.map((t: any) => [t.key, t.value]));
      for (const e of events) {
        if (e.startupStep.parentId !== undefined) expect(byId.get(e.startupStep.parentId)).toBeDefined();
        expect(Date.parse(e.endTime)).toBeGreaterThanOrEqual(Date.parse(e.startTime));
        expect(e.duration).toMatch(/^PT\d+(\.\d+)?S$/);
      }
      const orders = events.find(
        (e) => e.startupStep.name === 'nest.bean.instantiate' && tags(e).bean === 'OrdersService',
      );
      expect(tags(orders)).toEqual({
        module: 'OrdersModule',
        bean: 'OrdersService',
        scope: 'singleton',
        phase: 'instantiate',
      });
      const module = byId.get(orders.startupStep.parentId);
      expect(module.startupStep.name).toBe('nest.module.instantiate');
      expect(tags(module).module).toBe('OrdersModule');
      expect(Date.parse(module.startTime)).toBeLessThanOrEqual(Date.parse(orders.startTime));
      expect(events.filter((e) => e.startupStep.name === 'diag.ghost.analysis')).toHaveLength(1);
    }
  });

  it('writes the ghost report at SIGTERM and exits as the Express app does', () => {
    expect([0, 'SIGTERM']).toContain(fastify.exit);
    expect(fastify.exit).toBe(express.exit);
    expect(fastify.reportTouched).toEqual(EXPECTED_TOUCHED);
    expect(fastify.reportUntouched).toEqual(EXPECTED_UNTOUCHED);
  });
});

interface SpanLine {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  scope?: string;
  attributes: Record<string, unknown>;
  events: { name: string; attributes?: Record<string, unknown> }[];
}

describe('beside @opentelemetry/instrumentation-http and -nestjs-core in one NodeSDK', () => {
  let spans: SpanLine[];
  let answers: Record<string, unknown>;
  let bare: Record<string, unknown>;
  let ghost: { touched: string[]; untouched: string[] };
  let candidates: string[];

  beforeAll(async () => {
    const spansFile = path.join(tempDir('spans'), 'spans.jsonl');
    const app = await startApp(LOADING, {
      app: 'orders-app',
      preload: 'telemetry-contrib.cjs',
      env: { DIAG_GHOST_TRACKING_ENABLED: 'true', SPANS_FILE: spansFile },
    });
    try {
      answers = await exercise(app);
      // Every request's server span is exported before the app is stopped.
      const deadline = Date.now() + 10_000;
      const exported = () =>
        fs.existsSync(spansFile)
          ? (fs.readFileSync(spansFile, 'utf8').match(/"scope":"@opentelemetry\/instrumentation-http"/g) ?? []).length
          : 0;
      while (exported() < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await app.stop('SIGTERM');
      ghost = app.readReport('diag-ghost-report.json');
      candidates = app.readReport().ghostCandidates.beans;
    } finally {
      await app.stop('SIGKILL');
    }
    spans = fs
      .readFileSync(spansFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as SpanLine);
    const plain = await startApp(LOADING, { app: 'orders-app', bare: true });
    try {
      bare = await exercise(plain);
    } finally {
      await plain.stop('SIGKILL');
    }
  }, 90_000);

  const named = (name: string) => spans.filter((s) => s.name === name);

  it('leaves the app answering exactly as without any instrumentation', () => {
    expect(answers).toEqual(EXPECTED_ANSWERS);
    expect(answers).toEqual(bare);
  });

  it('gives the same verdicts as without the contrib instrumentations', () => {
    expect([...candidates].sort()).toEqual(EXPECTED_CANDIDATES);
    expect([...ghost.touched].sort()).toEqual(EXPECTED_TOUCHED);
    expect([...ghost.untouched].sort()).toEqual(EXPECTED_UNTOUCHED);
  });

  it('puts the container start-up span inside the contrib "Create Nest App" span, in one trace', () => {
    const create = named('Create Nest App');
    const startup = named('diag.container.startup');
    expect(create).toHaveLength(1);
    expect(startup).toHaveLength(1);
    expect(startup[0]!.traceId).toBe(create[0]!.traceId);
    expect(startup[0]!.parentSpanId).toBe(create[0]!.spanId);
    const beans = named('diag.bean.instantiation').filter((s) => s.traceId === create[0]!.traceId);
    expect(beans.map((s) => s.attributes['diag.bean.name'])).toEqual(
      expect.arrayContaining(['OrdersService', 'UnusedService']),
    );
  });

  it('wraps nothing twice: one handler span per request, one instantiation span per bean', () => {
    const handlers = spans.filter(
      (s) => s.scope === '@opentelemetry/instrumentation-nestjs-core' && s.attributes['nestjs.type'] === 'handler',
    );
    expect(handlers.map((s) => s.attributes['nestjs.callback']).sort()).toEqual(['list', 'lookup', 'one']);
    const httpServer = spans.filter((s) => s.scope === '@opentelemetry/instrumentation-http' && /^GET/.test(s.name));
    expect(httpServer).toHaveLength(3);
    const perBean = named('diag.bean.instantiation').map((s) => s.attributes['diag.bean.name']);
    expect(perBean.filter((n) => n === 'OrdersService')).toHaveLength(1);
    expect(new Set(perBean).size).toBe(perBean.length);
  });

  it('records a first touch on a span of the request that made it', () => {
    const touched = spans.filter((s) =>
      s.events.some((e) => e.name === 'diag.bean.first_touch' && e.attributes?.['diag.bean.name'] === 'LookupService'),
    );
    expect(touched).toHaveLength(1);
    const requestTraces = new Set(
      spans.filter((s) => s.scope === '@opentelemetry/instrumentation-http').map((s) => s.traceId),
    );
    expect(requestTraces.has(touched[0]!.traceId)).toBe(true);
  });
});

describe("under the application's own instrument.instanceDecorator (NestJS >= 11.1.4)", () => {
  // decorated-app and observe-app add to the orders beans a controller that reports what the decorator did and
  // a `useValue` bean it calls (both touched), and a bean whose factory builds it as a Proxy (never tracked,
  // whatever the decorator).
  const TOUCHED = [...EXPECTED_TOUCHED, 'GreetingService', 'InspectController'].sort();
  const UNTOUCHED = EXPECTED_UNTOUCHED;

  interface DecoratedRun {
    answers: Record<string, unknown>;
    identity: any;
    inspect: any;
    ghost: any;
  }

  async function run(
    loading: LoadingCase,
    app: string,
    env: NodeJS.ProcessEnv,
    bareRun = false,
  ): Promise<DecoratedRun> {
    const running = await startApp(loading, {
      app,
      bare: bareRun,
      env: { ...env, DIAG_GHOST_TRACKING_ENABLED: 'true' },
    });
    try {
      const answers = await exercise(running);
      const identity = (await getJson(running.port, '/orders/identity')).body;
      const inspect = (await getJson(running.port, '/inspect')).body;
      await running.stop('SIGTERM');
      const ghost = bareRun ? undefined : running.readReport('diag-ghost-report.json');
      return { answers, identity, inspect, ghost };
    } finally {
      await running.stop('SIGKILL');
    }
  }

  /** The same app with and without the instrumentation. */
  const tracedAndBare = (loading: LoadingCase, app: string, env: NodeJS.ProcessEnv = {}) =>
    Promise.all([run(loading, app, env), run(loading, app, env, true)]);

  /** The application's own beans: what the verdicts below are about. */
  const APPLICATION_BEANS = [...TOUCHED, ...UNTOUCHED, 'FactoryProxiedService'];
  const ownBeans = (names: Iterable<string>) => [...names].filter((n) => APPLICATION_BEANS.includes(n)).sort();

  /** What a decorator returning a Proxy of every application bean must leave as it was, and the verdicts it must allow. */
  function expectTrackedThroughProxies(tracked: DecoratedRun, bare: DecoratedRun): void {
    expect(tracked.answers).toEqual(EXPECTED_ANSWERS);
    // Dependents and the container hold exactly the Proxy the application's decorator returned, which ran
    // once per instance (Nest itself hands its Reflector over twice), as without the instrumentation.
    expect(tracked.identity).toEqual(bare.identity);
    expect(tracked.inspect).toEqual(bare.inspect);
    expect(tracked.inspect).toMatchObject({
      heldIsTheContainers: true,
      heldIsWhatTheDecoratorReturned: true,
      heldIsProxy: true,
      heldIsOrdersService: true,
      heldConstructor: 'OrdersService',
      factoryProxiedIsProxy: true,
      ping: 'pong',
      valueIsWhatTheDecoratorReturned: true,
      valueIsProxy: true,
      greeting: 'hello',
    });
    expect(tracked.inspect.handed).toEqual(expect.arrayContaining(APPLICATION_BEANS));
    expect(ownBeans(tracked.inspect.handedMoreThanOnce)).toEqual([]);
    // Each bean called through its Proxy is touched, the uncalled ones are not; the Proxy its own factory
    // built is not tracked.
    expect(ownBeans(tracked.ghost.touched)).toEqual(TOUCHED);
    expect(ownBeans(tracked.ghost.untouched)).toEqual(UNTOUCHED);
    expect(Object.entries(tracked.ghost.untrackable).filter(([, reason]) => reason === 'already-proxied')).toEqual([
      ['FactoryProxiedService', 'already-proxied'],
    ]);
  }

  it('composes with a decorator that returns the instance: both see every bean, identity and behaviour unchanged', async () => {
    const [tracked, bare] = await tracedAndBare(LOADING, 'decorated-app', { APP_DECORATOR: 'mark' });
    expect(tracked.answers).toEqual(EXPECTED_ANSWERS);
    expect(tracked.identity).toEqual(bare.identity);
    expect(tracked.inspect).toEqual(bare.inspect);
    expect(tracked.identity).toMatchObject({
      sameInstance: true,
      isOrdersService: true,
      constructorName: 'OrdersService',
      decoratedMark: 'marked',
    });
    expect(tracked.identity.decorated).toEqual(
      expect.arrayContaining(['OrdersController', 'OrdersService', 'PriceService', 'UnusedService']),
    );
    expect(tracked.inspect).toMatchObject({ heldIsProxy: false, heldIsWhatTheDecoratorReturned: true });
    expect([...tracked.ghost.touched].sort()).toEqual(TOUCHED);
    expect([...tracked.ghost.untouched].sort()).toEqual(UNTOUCHED);
    expect(tracked.ghost.untrackable).toMatchObject({ FactoryProxiedService: 'already-proxied' });
  }, 60_000);

  it("tracks each bean behind the Proxy the app's decorator returns, and leaves a Proxy built by a factory alone", async () => {
    const [tracked, bare] = await tracedAndBare(LOADING, 'decorated-app', { APP_DECORATOR: 'proxy' });
    expectTrackedThroughProxies(tracked, bare);
    expect([...tracked.ghost.touched].sort()).toEqual(TOUCHED);
    expect([...tracked.ghost.untouched].sort()).toEqual(UNTOUCHED);
    // The Proxy counted every call made through it, as it does without the instrumentation.
    expect(tracked.identity.decoratedMark).toMatch(/^proxy:[1-9]\d*$/);
  }, 60_000);

  // @nestjs/observe supports Nest 11 and 12; Nest 12 is ESM-only, loaded by an ESM app or through require(esm).
  it.each<LoadingCase>(['nest11-cjs', 'nest12-esm', 'nest12-cjs'])(
    'tracks the beans @nestjs/observe hands back as Proxies (%s)',
    async (loading) => {
      const [tracked, bare] = await tracedAndBare(loading, 'observe-app');
      expectTrackedThroughProxies(tracked, bare);
      // Its own providers are a library's: counted, never tracked. (Not yet where a CommonJS app requires Nest
      // 12: ObserveModule is a class createObserveModule() makes while the app loads, and there neither the
      // @Module() hook, which is CommonJS only, nor the package root's exports name it or its internal classes.)
      expect(tracked.ghost.frameworkSkipped).toBeGreaterThan(0);
      if (loading !== 'nest12-cjs') {
        expect([...tracked.ghost.touched].sort()).toEqual(TOUCHED);
        expect([...tracked.ghost.untouched].sort()).toEqual(UNTOUCHED);
      }
    },
    60_000,
  );
});
