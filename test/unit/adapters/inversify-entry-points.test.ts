import 'reflect-metadata';
import * as path from 'node:path';

import { inversifyEntryPoints, usedByControllers } from '../../../src/adapters/lazy/inversify/entry-points';

/**
 * Entry points of InversifyJS web layers, read from the metadata the real decorators write:
 * inversify-express-utils 6 (installed beside InversifyJS 6 in test/fixtures/inversify6 by the test setup), and
 * @inversifyjs/framework-core's `@CatchError()` (the error filters of @inversifyjs/http-*, beside the root's
 * InversifyJS 7).
 */
const utils = require(path.resolve(__dirname, '../../fixtures/inversify6/node_modules/inversify-express-utils')) as {
  controller(path: string): ClassDecorator;
};

describe('inversifyEntryPoints', () => {
  it('names a class @controller() marked, and nothing else', () => {
    class OrdersController {}
    utils.controller('/orders')(OrdersController);
    class PlainService {}
    expect(inversifyEntryPoints(OrdersController)).toEqual(['inversify-express-utils controller']);
    expect(inversifyEntryPoints(PlainService)).toEqual([]);
    expect(inversifyEntryPoints(undefined)).toEqual([]);
    expect(inversifyEntryPoints('OrdersController')).toEqual([]);
  });

  it('names an error filter @CatchError() marks: the web layer resolves it only when its error is thrown', () => {
    const { CatchError } = require('@inversifyjs/framework-core') as typeof import('@inversifyjs/framework-core');
    class NotFoundError extends Error {}
    class NotFoundFilter {
      catch(): void {}
    }
    CatchError(NotFoundError)(NotFoundFilter);
    class AnyErrorFilter {
      catch(): void {}
    }
    CatchError()(AnyErrorFilter);
    expect(inversifyEntryPoints(NotFoundFilter)).toEqual(['@inversifyjs/framework-core @CatchError']);
    expect(inversifyEntryPoints(AnyErrorFilter)).toEqual(['@inversifyjs/framework-core @CatchError']);
    // a subclass inherits the filter's code, not its decorator: only its own @CatchError() makes it one
    class Unmarked extends NotFoundFilter {}
    expect(inversifyEntryPoints(Unmarked)).toEqual([]);
  });

  it('names the guards, interceptors and middleware a controller names, on the class or a method, and nothing else', () => {
    const core = require('@inversifyjs/framework-core') as typeof import('@inversifyjs/framework-core');
    class TokenCheckInterceptor {
      intercept(): void {}
    }
    class RoleGuard {
      activate(): boolean {
        return true;
      }
    }
    class Unused {}
    class UsersController {
      list(): string[] {
        return [];
      }
      remove(): void {}
    }
    utils.controller('/users')(UsersController);
    core.UseInterceptor(TokenCheckInterceptor as never)(UsersController);
    // one guard on two methods: both named, so that a reader knows where it runs
    for (const method of ['list', 'remove'] as const)
      core.UseGuard(RoleGuard as never)(
        UsersController.prototype,
        method,
        Object.getOwnPropertyDescriptor(UsersController.prototype, method)!,
      );
    // the same decorators on a class that is no controller: the web layer never reads them
    class NotAController {}
    core.UseInterceptor(Unused as never)(NotAController);
    const used = usedByControllers([UsersController, NotAController, TokenCheckInterceptor, undefined]);
    expect([...used].map(([id, why]) => [typeof id === 'function' ? id.name : id, why])).toEqual([
      ['TokenCheckInterceptor', '@inversifyjs/framework-core interceptor of UsersController'],
      ['RoleGuard', '@inversifyjs/framework-core guard of UsersController.list, UsersController.remove'],
    ]);
  });
});
