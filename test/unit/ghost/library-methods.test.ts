import { ConsoleLogger } from '@nestjs/common';
import { LibraryMethods } from '../../../src/ghost/library-methods';
import { ClassOriginIndex } from '../../../src/ghost/origins/class-origin';

describe("which of a bean's methods a library defined", () => {
  const index = new ClassOriginIndex();
  const { Strategy } = require('passport-local') as { Strategy: new (...args: any[]) => object };
  index.scanRequireCache();

  it("leaves an application class's own methods to it, and its library base's to the library", () => {
    class AppLogger extends ConsoleLogger {
      audit(): void {}
    }
    const methods = new LibraryMethods(index, []);
    expect(methods.defines(AppLogger.prototype, 'audit')).toBe(false);
    expect(methods.defines(AppLogger.prototype, 'log')).toBe(true);
    expect(methods.defines(AppLogger.prototype, 'setContext')).toBe(true);
  });

  it("takes a class a library's factory made for the library's: one the framework names, or one extending a library's", () => {
    const mixin = (Base: new (...args: any[]) => object) =>
      class MixinStrategy extends Base {
        getPassportInstance(): void {}
      };
    class TokenStrategy extends mixin(Strategy) {
      validate(): void {}
    }
    class Guard {
      canActivate(): boolean {
        return true;
      }
    }
    const methods = new LibraryMethods(index, [(cls) => cls === Guard]);
    expect(methods.defines(TokenStrategy.prototype, 'validate')).toBe(false);
    expect(methods.defines(TokenStrategy.prototype, 'getPassportInstance')).toBe(true);
    expect(methods.defines(TokenStrategy.prototype, 'authenticate')).toBe(true);
    expect(methods.defines(Guard.prototype, 'canActivate')).toBe(true);
    // a class of its own, no library anywhere: the application's
    class Local {
      run(): void {}
    }
    expect(methods.defines(Local.prototype, 'run')).toBe(false);
  });
});
