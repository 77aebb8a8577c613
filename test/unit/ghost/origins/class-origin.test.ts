import { EventEmitter } from 'node:events';
import { ClassOriginIndex } from '../../../../src/ghost/origins/class-origin';

describe('ClassOriginIndex', () => {
  it('knows library classes from require.cache and app classes from the project', () => {
    const index = new ClassOriginIndex();
    const { Strategy } = require('passport-local');
    index.scanRequireCache();
    expect(index.originOf(Strategy)).toBe('library');
    expect(index.originOf(ClassOriginIndex)).toBe('app');
    expect(index.originOf(Map)).toBe('builtin');
    expect(index.originOf(EventEmitter)).toBe('builtin');
    expect(index.originOf(class Local {})).toBe('unknown');
  });

  it('finds a library ancestor through an unexported mixin, and ignores builtin bases', () => {
    const index = new ClassOriginIndex();
    const { Strategy } = require('passport-local');
    index.scanRequireCache();
    const mixin = (Base: new (...a: any[]) => object) => class Mixin extends Base {};
    class Local extends mixin(Strategy) {}
    class Emitter extends EventEmitter {}
    expect(index.libraryAncestor(Local)).toBe(Strategy);
    expect(index.libraryAncestor(Emitter)).toBeUndefined();
    expect(index.libraryAncestor(class Plain {})).toBeUndefined();
  });

  it('records namespaces handed in by hooks, getters included', () => {
    const index = new ClassOriginIndex();
    class FromEsm {}
    const namespace = Object.defineProperty({}, 'FromEsm', { get: () => FromEsm, enumerable: true });
    index.registerExports(namespace, 'library');
    expect(index.originOf(FromEsm)).toBe('library');
  });

  it('reads a namespace registered while modules load only when first asked, then knows its classes', () => {
    const index = new ClassOriginIndex();
    class Base {}
    class Derived extends Base {}
    let reads = 0;
    const namespace = Object.defineProperty({}, 'Base', { get: () => (reads++, Base), enumerable: true });
    index.registerLibraryLater(namespace);
    expect(reads).toBe(0);
    expect(index.libraryAncestor(Derived)).toBe(Base);
    expect(index.originOf(Base)).toBe('library');
    expect(reads).toBe(1);
  });
});
