/**
 * Each entry point's runtime exports, listed: what a user calls and nothing else. A new export fails here until
 * it is added below, so exporting something is a decision (and its removal a breaking change to announce).
 */
import * as path from 'node:path';
import * as ts from 'typescript';

import * as main from '../../src';
import * as sketch from '../../src/sketch';

const names = (entry: object): string[] => Object.keys(entry).sort();

describe('entry points', () => {
  it("diag-instrumentation exports the instrumentation, the lazy containers' ready signal, the logger hook, the errors' base, the report merge and the kept mark", () => {
    expect(names(main)).toEqual([
      'DiagError',
      'DiagInstrumentation',
      'Kept',
      'diagReady',
      'mergeGhostReports',
      'setLogger',
    ]);
  });

  it('diag-instrumentation/sketch exports the sketches, the registry, the stores, the decorators and the loader', () => {
    expect(names(sketch)).toEqual(
      [
        // sketches and their registry
        'CountMinSketch',
        'WindowedCountMinSketch',
        'SketchRegistry',
        'sketchRegistry',
        // where the counts live
        'RedisSketchStore',
        'nativeSketchStore',
        // on NestJS
        'SketchLimit',
        'SketchShield',
        'SketchFraud',
        'defineSketchDecorator',
        'SkipSketch',
        'SketchKeys',
        'SketchGuard',
        'SketchModule',
        'SketchThresholdFilter',
        'hashSketchKey',
        // errors
        'SketchThresholdError',
        'SketchKeyError',
        'SketchClosedError',
        'SketchConfigError',
        'SketchAllocationError',
        'UnsatisfiedLinkError',
        // the native library
        'loadNativeLibrary',
        'nativeLibrary',
        'resetNativeLibrary',
        'platformTarget',
        'detectLibc',
        'inspectBinary',
      ].sort(),
    );
  });
});

describe('the public types', () => {
  it('each carry a doc comment', () => {
    const root = path.resolve(__dirname, '..', '..');
    const entries = ['src/index.ts', 'src/sketch/index.ts'].map((f) => path.join(root, f));
    const program = ts.createProgram(entries, {
      strict: true,
      experimentalDecorators: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      esModuleInterop: true,
      noEmit: true,
    });
    const checker = program.getTypeChecker();
    const undocumented = entries.flatMap((file) => {
      const entry = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
      return checker.getExportsOfModule(entry).flatMap((exported) => {
        const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
        return ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim() === ''
          ? [`${path.relative(root, file)}: ${exported.name}`]
          : [];
      });
    });
    expect(undocumented).toEqual([]);
  });
});

// The entry point's Kept, mergeGhostReports and diagReady are functions of its own that require their module at
// the first call (docs/benchmarks.md, "The lazy containers' adapters"): each must still do what its module's does.
describe("the entry point's lazily loaded functions", () => {
  it('Kept marks a method and a whole class, with and without a reason', () => {
    const { keptReason } = jest.requireActual<typeof import('../../src/ghost/kept')>('../../src/ghost/kept');
    class Partner {
      quarterly(): void {}
      other(): void {}
    }
    main.Kept('partner quarterly reconciliation')(
      Partner.prototype,
      'quarterly',
      Object.getOwnPropertyDescriptor(Partner.prototype, 'quarterly')!,
    );
    class Whole {
      any(): void {}
    }
    main.Kept()(Whole);
    expect(keptReason(Partner.prototype, 'quarterly')).toBe('partner quarterly reconciliation');
    expect(keptReason(Partner.prototype, 'other')).toBeUndefined();
    expect(keptReason(Whole.prototype, 'any')).toBe('kept on purpose');
  });

  it('mergeGhostReports gives what its module gives', () => {
    const { mergeGhostReports } = jest.requireActual<typeof import('../../src/ghost/tracking/ghost-report')>(
      '../../src/ghost/tracking/ghost-report',
    );
    expect(main.mergeGhostReports([])).toEqual(mergeGhostReports([]));
  });

  it('diagReady makes the process ready for the lazy containers', () => {
    const ready = jest.requireActual<typeof import('../../src/adapters/lazy/ready')>('../../src/adapters/lazy/ready');
    expect(ready.readyCause()).toBeUndefined();
    main.diagReady();
    expect(ready.readyCause()).toBe('diagReady');
  });
});
