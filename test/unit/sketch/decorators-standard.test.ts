import * as path from 'node:path';

import * as ts from 'typescript';

import { SketchRegistry } from '../../../src/sketch/registry';
import { SketchThresholdError } from '../../../src/sketch/nestjs';
import { captureLogs } from '../../support/logs';
import { testLibrary } from './helpers';

/**
 * The same decorators under TypeScript 5's standard (TC39) decorators: the fixture below is type-checked and
 * compiled by the TypeScript API with `experimentalDecorators` off, as a project without it would be, and run.
 */
const decoratorsPath = path.resolve(__dirname, '../../../src/sketch/nestjs/index.ts');
const fixturePath = path.resolve(__dirname, '__standard_fixture__.ts');

const FIXTURE = `
import { SketchFraud, SketchLimit, SketchShield, SkipSketch, defineSketchDecorator } from ${JSON.stringify(decoratorsPath.replace(/\.ts$/, ''))};
import type { SketchRegistry } from ${JSON.stringify(path.resolve(__dirname, '../../../src/sketch/registry'))};

const SketchBurst = defineSketchDecorator('BURST');

export function build(registry: SketchRegistry) {
  class Api {
    calls = 0;
    @SketchLimit({ windowMs: 1000, requests: 2, key: (user: string) => user, registry })
    call(user: string, _extra?: number): string {
      this.calls++;
      return 'ok ' + user;
    }
    @SketchLimit({ windowMs: 1000, requests: 2, key: (user: string) => user, registry })
    other(user: string): string {
      return 'other ' + user;
    }
    @SketchShield({ threshold: 1, registry })
    async later(): Promise<string> {
      return 'later';
    }
    @SketchBurst({ windowMs: 500, threshold: 1, mode: 'observe', registry })
    static ping(): string {
      return 'pong';
    }
  }
  return Api;
}

export function buildWhole(registry: SketchRegistry) {
  @SketchFraud({ windowMs: 2000, maxEvents: 1, key: (user: string) => user, registry })
  class Whole {
    first(user: string): string {
      return 'first ' + user;
    }
    @SkipSketch()
    free(user: string): string {
      return 'free ' + user;
    }
  }
  return Whole;
}
`;

function compile(): string {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    strict: true,
    experimentalDecorators: false,
    emitDecoratorMetadata: false,
    skipLibCheck: true,
    esModuleInterop: true,
    types: ['node'],
    noEmitOnError: true,
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  host.readFile = (f) => (path.resolve(f) === fixturePath ? FIXTURE : readFile(f));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (f) => path.resolve(f) === fixturePath || fileExists(f);
  const program = ts.createProgram([fixturePath], options, host);
  const diagnostics = ts.getPreEmitDiagnostics(program);
  if (diagnostics.length > 0) {
    throw new Error(ts.formatDiagnosticsWithColorAndContext(diagnostics, host));
  }
  let js = '';
  program.emit(program.getSourceFile(fixturePath), (name, text) => {
    if (name.endsWith('.js')) js = text;
  });
  return js;
}

describe('standard (TC39) decorators', () => {
  const library = testLibrary();
  let Api: any;
  let Whole: any;
  let registry: SketchRegistry;

  beforeAll(() => {
    const js = compile();
    expect(js).not.toContain('__decorate('); // the legacy helper: this really is the standard flavour
    expect(js).toContain('__esDecorate');
    const mod = { exports: {} as any };
    // the fixture's require of the decorators resolves to the very module this test imports
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- runs the fixture tsc compiled
    new Function('require', 'module', 'exports', js)(require, mod, mod.exports);
    registry = new SketchRegistry({ library, autoRotate: false });
    Api = mod.exports.build(registry);
    Whole = mod.exports.buildWhole(registry);
  }, 60_000);

  afterAll(() => registry.closeAll());

  it('limits per key, shares the sketch across methods, keeps name and length', () => {
    const api = new Api();
    expect(Api.prototype.call.name).toBe('call');
    expect(Api.prototype.call.length).toBe(2);
    expect(api.call('a')).toBe('ok a');
    expect(api.other('a')).toBe('other a');
    const err = (() => {
      try {
        api.call('a');
      } catch (e) {
        return e as SketchThresholdError;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(SketchThresholdError);
    expect(err!.method).toBe('Api.call');
    expect(err!.sketchId).toBe('LIMIT_1000');
    expect(api.calls).toBe(1);
    expect(api.call('b')).toBe('ok b');
  });

  it('rejects the promise of an async method', async () => {
    const api = new Api();
    await expect(api.later()).resolves.toBe('later');
    let p: Promise<string> | undefined;
    expect(() => (p = api.later())).not.toThrow();
    await expect(p).rejects.toMatchObject({ code: 'ERR_SKETCH_THRESHOLD', sketchId: 'SHIELD_60000' });
  });

  it('decorates static methods and custom types, observe mode included', () => {
    const logs = captureLogs();
    try {
      expect(Api.ping()).toBe('pong');
      expect(Api.ping()).toBe('pong');
    } finally {
      logs.restore();
    }
    expect(logs.warnings).toEqual([
      expect.stringMatching(/^sketch BURST_500 \(observe mode\): Api\.ping key [0-9a-f]{16} at 2 > threshold 1/),
    ]);
    expect(registry.stats('BURST_500')).toEqual({ hits: 2, breaches: 1, keyErrors: 0 });
    expect(registry.list().map((i) => i.id)).toEqual(['BURST_500', 'LIMIT_1000', 'SHIELD_60000']);
  });

  it('on a class: every method but the ones marked @SkipSketch()', () => {
    const whole = new Whole();
    expect(whole.first('a')).toBe('first a');
    expect(() => whole.first('a')).toThrow(SketchThresholdError);
    for (let i = 0; i < 3; i++) expect(whole.free('a')).toBe('free a');
    expect(registry.stats('FRAUD_2000')).toEqual({ hits: 2, breaches: 1, keyErrors: 0 });
  });
});
