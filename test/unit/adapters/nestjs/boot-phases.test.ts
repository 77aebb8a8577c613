import { types } from 'node:util';
import { timedHookPhase } from '../../../../src/adapters/nestjs/boot-phases';
import { bootRecord, STEP_KIND } from '../../../../src/shared/boot-clock';

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
