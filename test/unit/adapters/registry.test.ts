import { CONTAINER_ADAPTERS, CONTAINER_NAMES, type AdapterHost } from '../../../src/adapters/registry';
import { resolveConfig } from '../../../src/config/properties';
import { GhostDetector } from '../../../src/ghost/detector';

describe('the adapters registry', () => {
  const host: AdapterHost = {
    detector: new GhostDetector(resolveConfig({}, {}, () => undefined)),
    patcher: { wrap: () => undefined, unwrap: () => undefined },
    beans: () => ({}),
  };

  it('names each container once, in the order diag.containers.include lists them', () => {
    expect(CONTAINER_NAMES).toEqual(['nestjs', 'inversify', 'tsyringe', 'awilix']);
  });

  it.each(CONTAINER_ADAPTERS.map((a) => [a.name, a] as const))(
    '%s hooks the packages it declares',
    (_name, adapter) => {
      const hooked = new Set(adapter.moduleDefinitions(host).map((d) => d.name));
      for (const pkg of adapter.packages) expect(hooked).toContain(pkg);
    },
  );
});
