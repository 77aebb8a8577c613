import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { types } from 'node:util';
import { SHUTDOWN_REPORT_MS, timedHookPhase } from '../../../../src/adapters/nestjs/boot-phases';
import { setLogger } from '../../../../src/shared/logger';
import { bootRecord, STEP_KIND } from '../../../../src/shared/boot-clock';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');

class Warmer {
  warmed = 0;
  async onModuleInit(): Promise<string> {
    await new Promise((resolve) => setTimeout(resolve, 5));
    this.warmed++;
    return 'warm';
  }
}

/** Nest's own way of calling a hook: `instance.onModuleInit()`, from each module's instances. */
async function callInitHook(this: { container: { getModules(): Map<string, unknown> } }): Promise<void> {
  for (const module of this.container.getModules().values()) {
    const { providers } = module as { providers: Map<unknown, { instance: any; isAlias?: boolean }> };
    const own = [...providers.values()].filter((w) => !w.isAlias);
    await Promise.all(own.map(async ({ instance }) => instance.onModuleInit?.()));
  }
}

describe("each bean's lifecycle hook timed for the length of its phase", () => {
  it("times the bean's call as Nest makes it, and puts back exactly what was there", async () => {
    const warmer = new Warmer();
    const own = { onModuleInit: () => 'own field' };
    const ownDescriptor = Object.getOwnPropertyDescriptor(own, 'onModuleInit');
    const proxied = new Proxy(new Warmer(), {});
    const frozen = Object.freeze({ onModuleInit: () => 'frozen' });
    const container = {
      getModules: () =>
        new Map([
          [
            'AppModule',
            {
              name: 'AppModule',
              providers: new Map<unknown, unknown>([
                [Warmer, { token: Warmer, instance: warmer }],
                ['OWN', { token: 'OWN', instance: own }],
                ['PROXY', { token: 'PROXY', instance: proxied }],
                ['FROZEN', { token: 'FROZEN', instance: frozen }],
                ['ALIAS', { token: 'ALIAS', instance: warmer, isAlias: true }],
              ]),
            },
          ],
        ]),
    };
    const before = bootRecord().steps.count;
    await timedHookPhase('onModuleInit', callInitHook as never).call({ container });
    expect(warmer.warmed).toBe(1);
    // Nothing of ours is left on the instances.
    expect(Object.getOwnPropertyDescriptor(warmer, 'onModuleInit')).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(own, 'onModuleInit')).toEqual(ownDescriptor);
    expect(types.isProxy(proxied)).toBe(true);
    const steps = bootRecord().steps;
    const recorded = [];
    for (let i = before; i < steps.count; i++) {
      recorded.push({
        kind: steps.kinds[i],
        name: steps.names[i],
        bean: steps.subjects[i],
        module: steps.groups[i],
        waited: steps.ends[i]! - steps.returns[i]!,
      });
    }
    expect(recorded.map(({ kind, name, bean, module }) => [kind, name, bean, module])).toEqual([
      [STEP_KIND.phase, 'nest.on_module_init', '', ''],
      [STEP_KIND.hook, 'onModuleInit', 'Warmer', 'AppModule'],
      [STEP_KIND.hook, 'onModuleInit', 'OWN', 'AppModule'],
    ]);
    // The awaited time of the async hook is a wait; the field's sync call has none.
    expect(recorded[1]!.waited).toBeGreaterThan(0);
    expect(recorded[2]!.waited).toBe(0);
  });

  it('passes a throwing hook’s error on unchanged, and still puts the instance back', async () => {
    const boom = new Error('boom');
    const bean = {
      onModuleInit(): never {
        throw boom;
      },
    };
    const container = {
      getModules: () => new Map([['M', { name: 'M', providers: new Map([['B', { token: 'B', instance: bean }]]) }]]),
    };
    const descriptor = Object.getOwnPropertyDescriptor(bean, 'onModuleInit');
    await expect(timedHookPhase('onModuleInit', callInitHook as never).call({ container })).rejects.toBe(boom);
    expect(Object.getOwnPropertyDescriptor(bean, 'onModuleInit')).toEqual(descriptor);
  });
});

describe('a close still waiting on a shutdown hook', () => {
  afterEach(() => {
    jest.useRealTimers();
    setLogger(null);
  });

  it('says every five seconds which hooks it waits for, and stops once they ended', async () => {
    jest.useFakeTimers();
    const warnings: string[] = [];
    setLogger({ debug: () => undefined, info: () => undefined, warn: (m) => warnings.push(m), error: () => undefined });
    let finish: () => void = () => undefined;
    const bean = { onModuleDestroy: () => new Promise<void>((resolve) => (finish = resolve)) };
    const container = {
      getModules: () =>
        new Map([['M', { name: 'M', providers: new Map([['Queue', { token: 'Queue', instance: bean }]]) }]]),
    };
    const callDestroyHook = async function (this: { container: typeof container }): Promise<void> {
      for (const m of this.container.getModules().values())
        for (const w of m.providers.values()) await (w.instance as typeof bean).onModuleDestroy();
    };
    const closing = timedHookPhase('onModuleDestroy', callDestroyHook as never).call({ container }) as Promise<void>;
    jest.advanceTimersByTime(SHUTDOWN_REPORT_MS);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/still waiting on Queue\.onModuleDestroy\(\) for \d+\.\d s/);
    finish();
    await closing;
    jest.advanceTimersByTime(SHUTDOWN_REPORT_MS * 2);
    expect(warnings).toHaveLength(1);
  });
});

describe('what the timers leave as it was', () => {
  const containerOf = (beans: Record<string, object>) => ({
    getModules: () =>
      new Map([
        [
          'M',
          {
            name: 'M',
            providers: new Map(Object.entries(beans).map(([token, instance]) => [token, { token, instance }])),
          },
        ],
      ]),
  });

  it("leaves a failed phase's rejection unhandled where the caller leaves it (an un-awaited listen)", () => {
    // In a process of its own: Jest keeps unhandled rejections from a test's listeners. The built module, as an
    // application gets it; the process must crash as it would without the timer.
    const script = `
      const { timed } = require(${JSON.stringify(path.join(ROOT, 'dist', 'adapters', 'nestjs', 'boot-phases.js'))});
      const listen = timed('nest.listen', async () => { throw new Error('EADDRINUSE'); });
      void listen.call({});
      setTimeout(() => console.log('still running'), 50);
    `;
    const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(run.stdout).not.toContain('still running');
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('EADDRINUSE');
  });

  it('puts every method back when two phases over one class overlap (two applications initialising at once)', async () => {
    class Shared {
      async onModuleInit(): Promise<void> {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
    const original = Shared.prototype.onModuleInit;
    const first = timedHookPhase('onModuleInit', callInitHook as never).call({
      container: containerOf({ A: new Shared() }),
    });
    const second = timedHookPhase('onModuleInit', callInitHook as never).call({
      container: containerOf({ B: new Shared() }),
    });
    await Promise.all([first, second]);
    expect(Shared.prototype.onModuleInit).toBe(original);
  });

  it("times a subclass's hook once, not again for its super.onModuleInit()", async () => {
    class Base {
      onModuleInit(): void {
        /* the base's own start */
      }
    }
    class Derived extends Base {
      override onModuleInit(): void {
        super.onModuleInit();
      }
    }
    const before = bootRecord().steps.count;
    await timedHookPhase('onModuleInit', callInitHook as never).call({
      container: containerOf({ Base: new Base(), Derived: new Derived() }),
    });
    const { steps } = bootRecord();
    const hooks: string[] = [];
    for (let i = before; i < steps.count; i++) if (steps.kinds[i] === STEP_KIND.hook) hooks.push(steps.subjects[i]!);
    expect(hooks.sort()).toEqual(['Base', 'Derived']);
  });
});
