/**
 * A fault in an adapter's own bookkeeping, inside the application's register or bind call, must never reach that
 * call: the container answers as it would without this package, and the fault is logged once. Each lazy
 * container's observer is driven here with the real library (the module hooks that normally hand it the exports
 * need a real process: the end-to-end suites cover those), and fed a registration whose properties throw when our
 * bookkeeping reads them.
 */
import 'reflect-metadata';
import { resolveConfig } from '../../../src/config/properties';
import { setLogger } from '../../../src/shared/logger';
import { unwrapMethod, wrapMethod } from '../../../src/patching/wrap';
import { GhostDetector, STARTUP_PUBLISH_DELAY_MS } from '../../../src/ghost/detector';
import { recordingLogger } from '../../support/logs';
import { tempDir } from '../../support/temp';

const patcher = { wrap: wrapMethod, unwrap: unwrapMethod };

let logs: ReturnType<typeof recordingLogger>;
let original: ReturnType<typeof setLogger>;
beforeAll(() => {
  original = setLogger(recordingLogger().logger);
});
beforeEach(() => {
  logs = recordingLogger();
  setLogger(logs.logger);
});
// The ledgers wait for ready with Node's Server#listen wrapped: fire it here, and let their analyses finish (on
// the turns after; they meet the same hostile names, and log it) and their start-up timelines publish (a moment
// after ready), so nothing of this file outlives it: a timer firing after the file ends requires a module into
// a torn-down Jest environment.
afterAll(async () => {
  (require('../../../src/adapters/lazy/ready') as typeof import('../../../src/adapters/lazy/ready')).diagReady();
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, STARTUP_PUBLISH_DELAY_MS + 50));
  setLogger(original);
});

function detector(): GhostDetector {
  return new GhostDetector(resolveConfig({ report: { dir: tempDir('faults') } }));
}

/** Reading any of our own symbols off `target` throws; everything else is the target's. */
function hostile<T extends object>(target: T): T {
  return new Proxy(target, {
    get(t, key, receiver) {
      if (typeof key === 'symbol' && key.description?.startsWith('diag-instrumentation'))
        throw new Error('hostile read');
      return Reflect.get(t, key, receiver);
    },
  });
}

/** A class whose `name` throws: the containers never read it, our bookkeeping names a binding by it. */
function hostileName(): new () => object {
  class Config {}
  Object.defineProperty(Config, 'name', {
    get() {
      throw new Error('hostile read');
    },
  });
  return Config;
}

/** The application is ready (Node's listen, as the ledgers wait for it), and their analyses have run. */
async function readyAndSettled(): Promise<void> {
  (require('../../../src/adapters/lazy/ready') as typeof import('../../../src/adapters/lazy/ready')).diagReady();
  // the analysis after ready takes turns of its own: the scan, the bindings' origins, the rest
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
}

/** The fault was logged, once however many registrations met it. */
function expectOneFaultLogged(framework: string): void {
  expect(logs.warnings.filter((w) => w.startsWith(`${framework}: ghost bookkeeping failed`))).toEqual([
    `${framework}: ghost bookkeeping failed, the container's answer is unchanged: hostile read`,
  ]);
}

it('awilix: register and resolve answer as usual when the bookkeeping of a registration throws', async () => {
  const { AwilixObserver } =
    require('../../../src/adapters/lazy/awilix/container-observer') as typeof import('../../../src/adapters/lazy/awilix/container-observer');
  const awilix = { ...(require('awilix') as Record<string, unknown>) };
  const observer = new AwilixObserver(detector());
  observer.patchResolvers(awilix, '13.0.0', patcher);
  observer.patchContainer(awilix, '13.0.0', patcher);
  try {
    const container = (awilix.createContainer as () => { register: Function; resolve: (name: string) => unknown })();
    const resolver = hostile((awilix.asValue as (v: unknown) => object)({ answer: 42 }));
    expect(() => container.register('config', resolver)).not.toThrow();
    expect(() => container.register('again', resolver)).not.toThrow();
    expect(container.resolve('config')).toEqual({ answer: 42 });
    // and at ready, where the analysis reads the registrations again, it leaves that one out alone
    await readyAndSettled();
    expectOneFaultLogged('awilix');
    expect(logs.warnings.filter((w) => w.startsWith('awilix: reading its bindings failed'))).toEqual([]);
  } finally {
    observer.unpatch(patcher);
  }
});

it('tsyringe: register and resolve answer as usual when the bookkeeping of a registration throws', async () => {
  const { TsyringeObserver } =
    require('../../../src/adapters/lazy/tsyringe/container-observer') as typeof import('../../../src/adapters/lazy/tsyringe/container-observer');
  const tsyringe = require('tsyringe') as typeof import('tsyringe');
  const observer = new TsyringeObserver(detector());
  // the module the hooks hand it: the container's file, whose `instance` is the global container
  observer.patch(require('tsyringe/dist/cjs/dependency-container'), '4.10.0', patcher);
  try {
    const Config = hostileName();
    const child = tsyringe.container.createChildContainer();
    expect(() => child.register(Config, { useValue: { answer: 42 } })).not.toThrow();
    expect(() => child.register(Config, { useValue: { answer: 43 } })).not.toThrow();
    expect(child.resolve(Config)).toEqual({ answer: 43 });
    // With Phase 2 off, registrations are described at ready: the fault meets the analysis there.
    await readyAndSettled();
    expectOneFaultLogged('tsyringe');
    expect(logs.warnings.filter((w) => w.startsWith('tsyringe: reading its bindings failed'))).toEqual([]);
  } finally {
    observer.unpatch(patcher);
  }
});

it('InversifyJS: bind and get answer as usual when the bookkeeping of a binding throws', async () => {
  const { InversifyObserver } =
    require('../../../src/adapters/lazy/inversify/container-observer') as typeof import('../../../src/adapters/lazy/inversify/container-observer');
  const observer = new InversifyObserver(detector());
  // InversifyJS 7+ adds its bindings through @inversifyjs/core's BindingService, the copy it loads itself
  observer.patchCore7(
    require(require.resolve('@inversifyjs/core', { paths: [require.resolve('inversify')] })),
    patcher,
    () => '7.0.0',
  );
  try {
    const { Container } = require('inversify') as typeof import('inversify');
    const Config = hostileName();
    class Mailer {}
    const container = new Container();
    expect(() => container.bind(Config).toConstantValue({ answer: 42 } as never)).not.toThrow();
    expect(() => container.bind(Mailer).toSelf()).not.toThrow();
    expect(container.get(Config)).toEqual({ answer: 42 });
    // Bindings are described at ready (before it, only their first activations are noted): the fault meets the
    // analysis there, and leaves out that binding alone.
    await readyAndSettled();
    expectOneFaultLogged('inversify');
    expect(logs.warnings.filter((w) => w.startsWith('inversify: reading its bindings failed'))).toEqual([]);
  } finally {
    observer.unpatch(patcher);
  }
});
