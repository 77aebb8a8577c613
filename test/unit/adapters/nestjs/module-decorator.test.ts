import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { frameworkOriginsKnown, isFrameworkWrapper } from '../../../../src/adapters/nestjs/framework-beans';
import { wrapModuleDecorator } from '../../../../src/adapters/nestjs/module-decorator';
import { ClassOriginIndex } from '../../../../src/ghost/origins/class-origin';

/** Stands in for @nestjs/common's factory: validates, then returns the decorator that defines metadata. */
function nestLikeModule(metadata: Record<string, unknown>): ClassDecorator {
  if ('bogus' in metadata) throw new Error("Invalid property 'bogus' passed into the @Module() decorator.");
  return (target) => {
    (target as unknown as { decorated: unknown }).decorated = metadata;
  };
}

describe('the @Module() wrapper', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-module-decorator-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('records an application module where it is decorated, and decorates as Nest does', () => {
    const origins = new ClassOriginIndex();
    const Module = wrapModuleDecorator(nestLikeModule as never, origins) as typeof nestLikeModule;
    class AppModule {}
    expect(origins.knows(AppModule)).toBe(false);
    Module({ providers: [] })(AppModule);
    expect((AppModule as unknown as { decorated: unknown }).decorated).toEqual({ providers: [] });
    expect(origins.originOf(AppModule)).toBe('app');
    expect(origins.fileOf(AppModule)).toBe(path.relative(process.cwd(), __filename));
  });

  // The library's decorator applied at load, for its own modules and the application's, is tested in real
  // processes (test/e2e/plugin-framework.test.ts): jest's module registry has no `loaded` flags to read.
  it('leaves a module that a library decorates after every module has loaded to the analysis', () => {
    const origins = new ClassOriginIndex();
    const Module = wrapModuleDecorator(nestLikeModule as never, origins);
    const lib = path.join(dir, 'node_modules', 'some-nest-lib', 'index.js');
    fs.mkdirSync(path.dirname(lib), { recursive: true });
    fs.writeFileSync(
      lib,
      'module.exports = (Module) => { class LibModule {} Module({ imports: [] })(LibModule); return LibModule; };\n',
    );
    const LibModule = (require(lib) as (m: unknown) => Function)(Module);
    expect((LibModule as unknown as { decorated: unknown }).decorated).toEqual({ imports: [] });
    expect(origins.knows(LibModule)).toBe(false);
  });

  it('throws what Nest throws for bad metadata, and records nothing', () => {
    const origins = new ClassOriginIndex();
    const Module = wrapModuleDecorator(nestLikeModule as never, origins) as typeof nestLikeModule;
    expect(() => Module({ bogus: true })).toThrow("Invalid property 'bogus'");
  });

  it('leaves Error.prepareStackTrace and the stack limit as they were', () => {
    const origins = new ClassOriginIndex();
    const Module = wrapModuleDecorator(nestLikeModule as never, origins) as typeof nestLikeModule;
    const prepare = Error.prepareStackTrace;
    const limit = Error.stackTraceLimit;
    Module({})(class {});
    expect(Error.prepareStackTrace).toBe(prepare);
    expect(Error.stackTraceLimit).toBe(limit);
  });
});

describe('ClassOriginIndex.recordDefinition', () => {
  it('takes file URLs (ES modules) as well as paths, and never demotes a library class', () => {
    const origins = new ClassOriginIndex();
    class FromEsm {}
    origins.recordDefinition(FromEsm, pathToFileURL(path.join(process.cwd(), 'src', 'app.module.mjs')).href);
    expect(origins.fileOf(FromEsm)).toBe(path.join('src', 'app.module.mjs'));
    class Lib {}
    origins.recordDefinition(Lib, path.join(path.sep, 'srv', 'node_modules', 'lib', 'index.js'));
    origins.recordDefinition(Lib, path.join(process.cwd(), 'src', 'reexport.js'));
    expect(origins.originOf(Lib)).toBe('library');
  });
});

describe('frameworkOriginsKnown', () => {
  class ModuleRef {}
  const container = (modules: Array<{ name: string; metatype: Function; providers: unknown[] }>) =>
    ({
      getModules: () =>
        new Map(modules.map((m) => [m.name, { ...m, providers: new Map(m.providers.map((t) => [t, {}])) }])),
    }) as never;

  it('asks for a scan while a module class or a core provider is unknown, not once both are known', () => {
    const origins = new ClassOriginIndex();
    class InternalCoreModule {}
    class AppModule {}
    const app = container([
      { name: 'InternalCoreModule', metatype: InternalCoreModule, providers: [] },
      { name: 'AppModule', metatype: AppModule, providers: [ModuleRef, 'CONFIG'] },
    ]);
    expect(frameworkOriginsKnown(app, origins)).toBe(false);
    origins.recordDefinition(AppModule, __filename);
    expect(frameworkOriginsKnown(app, origins)).toBe(false); // ModuleRef still unknown
    origins.registerExports({ ModuleRef }, 'library');
    expect(frameworkOriginsKnown(app, origins)).toBe(true); // InternalCoreModule needs no origin
  });
});

describe('isFrameworkWrapper', () => {
  const origins = new ClassOriginIndex();
  class LibPlugin {}
  class LibResolver {}
  class AppPlugin {}
  class AppResolver {}
  origins.registerExports({ LibPlugin, LibResolver }, 'library');
  origins.recordDefinition(AppPlugin, __filename);
  origins.recordDefinition(AppResolver, __filename);
  /** A module class built at run time, as Vendure hosts a plugin's resolvers: no origin of its own. */
  const hostOf = (plugin: Function) => {
    const metatype = { [`${plugin.name}ApiModule`]: class {} }[`${plugin.name}ApiModule`];
    return { name: metatype.name, metatype, imports: new Set([{ name: plugin.name, metatype: plugin }]) };
  };

  it("speaks for the application's plugin that a run-time module imports", () => {
    const host = hostOf(AppPlugin);
    expect(isFrameworkWrapper({ token: host.metatype, metatype: host.metatype, host }, origins)).toBe(false);
    expect(isFrameworkWrapper({ token: AppResolver, metatype: AppResolver, host }, origins)).toBe(false);
    // a library class the application's plugin hosts stays the application's choice
    expect(isFrameworkWrapper({ token: LibResolver, metatype: LibResolver, host }, origins)).toBe(false);
  });

  it("counts a run-time module that imports only a library's plugin, and the library's beans in it, as the framework's", () => {
    const host = hostOf(LibPlugin);
    expect(isFrameworkWrapper({ token: host.metatype, metatype: host.metatype, host }, origins)).toBe(true);
    expect(isFrameworkWrapper({ token: LibResolver, metatype: LibResolver, host }, origins)).toBe(true);
    expect(isFrameworkWrapper({ token: AppResolver, metatype: AppResolver, host }, origins)).toBe(false);
  });

  it('decides a bean Nest gives no host (middleware) by the module that lists it', () => {
    const mixin = class {};
    expect(
      isFrameworkWrapper({ token: mixin, metatype: mixin }, origins, { name: 'LibPlugin', metatype: LibPlugin }),
    ).toBe(true);
    expect(
      isFrameworkWrapper({ token: mixin, metatype: mixin }, origins, { name: 'AppPlugin', metatype: AppPlugin }),
    ).toBe(false);
  });
});
