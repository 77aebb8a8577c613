/**
 * Which methods of a tracked bean a library defined, and so are not the application's to delete (issue #43): a
 * method whose class comes from a library's files (`providers: [ConfigService]`'s private helpers, ConsoleLogger's
 * `log`), whose class the framework says a library made at run time (NestJS's `mixin()`: `AuthGuard('jwt')`), or
 * whose class no module exports and extends a library's (`PassportStrategy(Strategy)` returns one, made in
 * @nestjs/passport). Asked after ready, when a report lists a bean's methods; each answer kept per class.
 */
import { classOf, methodOwner } from './member-source';
import type { ClassOriginIndex } from './origins/class-origin';

export class LibraryMethods {
  /** Per class prototype: the answer for each method asked about (a class's methods do not move). */
  private readonly byPrototype = new WeakMap<object, Map<string, boolean>>();

  /**
   * @param origins where classes come from
   * @param libraryClasses the adapters' tests for classes a library made at run time (read at each question: an
   *   adapter may add one later)
   */
  constructor(
    private readonly origins: ClassOriginIndex,
    private readonly libraryClasses: ReadonlyArray<(cls: Function) => boolean>,
  ) {}

  /**
   * Whether `method`, as a call on an instance whose class prototype is `proto` reaches it, is a library's code.
   * `declaredWithBean(className)` says whether the bean's own source file declares a class of that name: an
   * application's base class that no module exports (`class EntryRepository extends Repository` beside the
   * repository that extends it) is the application's, though it extends a library's like a factory's class does.
   */
  defines(proto: object, method: string, declaredWithBean: (className: string) => boolean = () => false): boolean {
    let known = this.byPrototype.get(proto);
    if (known === undefined) this.byPrototype.set(proto, (known = new Map()));
    let library = known.get(method);
    if (library === undefined) {
      const owner = methodOwner(proto, method) ?? proto;
      const cls = classOf(owner);
      library =
        cls !== undefined &&
        (this.isLibraryClass(cls) ||
          // A class no module exports, between the bean's class and a library's base: what a library's factory
          // returns, unless the bean's file declares it. An application's such class declared elsewhere is taken
          // for a library's: its methods are then left out of the findings, the safe side.
          (owner !== proto &&
            this.origins.originOf(cls) === 'unknown' &&
            this.extendsLibraryClass(cls) &&
            !(cls.name !== '' && declaredWithBean(cls.name))));
      known.set(method, library);
    }
    return library;
  }

  private isLibraryClass(cls: Function): boolean {
    return this.origins.originOf(cls) === 'library' || this.libraryClasses.some((isLibrary) => isLibrary(cls));
  }

  private extendsLibraryClass(cls: Function): boolean {
    try {
      const parent: unknown = Object.getPrototypeOf(cls);
      return typeof parent === 'function' && parent !== Function.prototype && this.isLibraryClass(parent);
    } catch {
      return false;
    }
  }
}
