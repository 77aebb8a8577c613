/**
 * The classes an InversifyJS web layer resolves around a controller's handlers are the framework's to call: an
 * outside trial's interceptors (`@UseInterceptor(TokenCheckInterceptor)` on its controllers, @inversifyjs/http-*),
 * resolved by the first request only, read never resolved by ready, and `check` said to remove them. Driven with the
 * real InversifyJS and the real decorators (@inversifyjs/framework-core's, inversify-express-utils' `@controller()`
 * from test/fixtures/inversify6 as the controller's mark).
 */
import 'reflect-metadata';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveConfig } from '../../../../src/config/properties';
import { GhostDetector, STARTUP_PUBLISH_DELAY_MS } from '../../../../src/ghost/detector';
import { unwrapMethod, wrapMethod } from '../../../../src/patching/wrap';
import { tempDir } from '../../../support/temp';

const patcher = { wrap: wrapMethod, unwrap: unwrapMethod };
const utils = require(path.resolve(__dirname, '../../../fixtures/inversify6/node_modules/inversify-express-utils')) as {
  controller(path: string): ClassDecorator;
};

it("a controller's interceptor is an entry point, never a candidate; a class nothing names stays one", async () => {
  const dir = tempDir('inversify-web-layer');
  const { InversifyObserver } =
    require('../../../../src/adapters/lazy/inversify/container-observer') as typeof import('../../../../src/adapters/lazy/inversify/container-observer');
  const detector = new GhostDetector(resolveConfig({ report: { dir } }));
  const observer = new InversifyObserver(detector);
  observer.patchCore7(
    require(require.resolve('@inversifyjs/core', { paths: [require.resolve('inversify')] })),
    patcher,
    () => '7.11.0',
  );
  try {
    const core = require('@inversifyjs/framework-core') as typeof import('@inversifyjs/framework-core');
    const { Container } = require('inversify') as typeof import('inversify');
    class TokenCheckInterceptor {
      intercept(): void {}
    }
    class UnusedInterceptor {
      intercept(): void {}
    }
    class RoleCheckInterceptor {
      intercept(): void {}
    }
    class UsersController {
      list(): string[] {
        return [];
      }
    }
    utils.controller('/users')(UsersController);
    core.UseInterceptor(TokenCheckInterceptor as never)(UsersController);
    // the trial's shape: an interceptor named by a symbol the container binds to its class, on a method
    const roleCheck = Symbol.for('RoleCheckInterceptor');
    core.UseInterceptor(roleCheck as never)(
      UsersController.prototype,
      'list',
      Object.getOwnPropertyDescriptor(UsersController.prototype, 'list')!,
    );
    const container = new Container();
    container.bind(UsersController).toSelf();
    container.bind(TokenCheckInterceptor).toSelf();
    container.bind(roleCheck).to(RoleCheckInterceptor);
    container.bind(UnusedInterceptor).toSelf();
    (
      require('../../../../src/adapters/lazy/ready') as typeof import('../../../../src/adapters/lazy/ready')
    ).diagReady();
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'diag-report.json'), 'utf8'));
    const node = (name: string) => report.graph.nodes.find((n: { name: string }) => n.name === name);
    expect(node('TokenCheckInterceptor').entryPoints).toEqual([
      '@inversifyjs/framework-core interceptor of UsersController',
    ]);
    // the symbol's description names the binding
    expect(node('RoleCheckInterceptor').entryPoints).toEqual([
      '@inversifyjs/framework-core interceptor of UsersController.list',
    ]);
    expect(report.ghostCandidates.beans).toEqual(['UnusedInterceptor']);
  } finally {
    observer.unpatch(patcher);
    await new Promise((resolve) => setTimeout(resolve, STARTUP_PUBLISH_DELAY_MS + 50));
  }
});
