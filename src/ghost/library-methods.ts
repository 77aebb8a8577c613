/**
 * Which methods of a tracked bean a library defined, and so are not the application's to delete (issue #43): a
 * method whose class comes from a library's files (`providers: [ConfigService]`'s private helpers, ConsoleLogger's
 * `log`), whose class the framework says a library made at run time (NestJS's `mixin()`: `AuthGuard('jwt')`), or
 * whose class no module exports and extends a library's (`PassportStrategy(Strategy)` returns one, made in
 * @nestjs/passport). Asked after ready, when a report lists a bean's methods.
 */
import { classOf, methodOwner } from './member-source';
import type { ClassOriginIndex } from './origins/class-origin';

export class LibraryMethods {
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
   * Not cached: a walk up a few prototypes and a map lookup per method, each time a report is built, where a cache
   * per class cost ~270 bytes a tracked bean on the heap (`bench:memory`: 466 → 740 B a bean).
   */
  defines(proto: object, method: string, declaredWithBean: (className: string) => boolean = () => false): boolean {
    const owner = methodOwner(proto, method) ?? proto;
    const cls = classOf(owner);
    return (
      cls !== undefined &&
      (this.isLibraryClass(cls) ||
        // A class no module exports, between the bean's class and a library's base: what a library's factory
        // returns, unless the bean's file declares it. An application's such class declared elsewhere is taken
        // for a library's: its methods are then left out of the findings, the safe side.
        (owner !== proto &&
          this.origins.originOf(cls) === 'unknown' &&
          this.extendsLibraryClass(cls) &&
          !(cls.name !== '' && declaredWithBean(cls.name))))
    );
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
