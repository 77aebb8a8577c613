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

  // The declared packages are what builds an adapter's definitions when one loads: a package its definitions
  // hook without declaring it would go unseen until another of its packages loaded first.
  it.each(CONTAINER_ADAPTERS.map((a) => [a.name, a] as const))(
    '%s declares exactly the packages its definitions hook',
    (_name, adapter) => {
      const hooked = new Set(adapter.moduleDefinitions(host).map((d) => d.name));
      expect([...hooked].sort()).toEqual([...new Set(adapter.packages)].sort());
    },
  );
});
