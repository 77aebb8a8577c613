/**
 * Where a method is defined, for the findings a person or code scanning opens: the file its bean's class was
 * defined in, as the start-up report names it, and the line of the method in it. For a built application that
 * file is already the TypeScript the user edits when the build wrote source maps (tsc's `sourceMap`, a bundler's
 * map: origins/class-origin.ts reads them once per file after ready), so the line is the method's line in the
 * `.ts`; without a map, the compiled file and its line. Read after ready, when a report asks, never at start-up.
 */
import { readFileSync } from 'node:fs';
import type { ClassOriginIndex } from './origins/class-origin';
import { applicationFile, compiledFileNaming, originalClassName } from './origins/declared-class';
import { sourceMapFor } from './origins/source-map';
import { originalOf } from './tracking/originals';
import type { MemberSource } from './member-verdicts';

/** The line (1-based) of `method`'s definition in `text`, after `class <className>` when that is found. */
export function methodLine(text: string, className: string | undefined, method: string): number | undefined {
  const lines = text.split('\n');
  const name = method.replace(/[$]/g, '\\$&');
  const classAt =
    className === undefined
      ? -1
      : lines.findIndex((l) => new RegExp(`\\bclass\\s+${className.replace(/[$]/g, '\\$&')}\\b`).test(l));
  const definition = new RegExp(
    `^\\s*(?:@\\S+\\s+)*(?:(?:public|private|protected|static|override|async|readonly)\\s+)*\\*?\\s*(?:${name}|\\[['"]${name}['"]\\]|['"]${name}['"])\\s*(?:<[^>]*>)?\\(`,
  );
  for (let i = Math.max(0, classAt); i < lines.length; i++) if (definition.test(lines[i]!)) return i + 1;
  return undefined;
}

/** The line (1-based) of `class <className>`'s declaration in `text` (tsc's `let X = class X {` included). */
export function classLine(text: string, className: string): number | undefined {
  const declaration = new RegExp(`\\bclass\\s+${className.replace(/[$]/g, '\\$&')}\\b`);
  const at = text.split('\n').findIndex((l) => declaration.test(l));
  return at < 0 ? undefined : at + 1;
}

/**
 * The line (1-based) where the module `moduleClass` declared in `text` registers `token` (`providers: [Logger]`): a
 * mention of the token in its decorator (`@Module({…})` above the class in TypeScript, tsc's `__decorate([…],
 * UserModule)` below it), else the mention nearest the class (a providers array declared beside it), imports left
 * out, and so are the lines that only point at it from another provider (`useExisting: Logger`, `inject: [Logger]`)
 * while another line names it (a trial's advice to remove "the line shown" named an alias's line). Undefined when
 * the file does not name the token.
 */
export function registrationLine(text: string, moduleClass: string, token: string): number | undefined {
  return (
    registrationLineWhere(text, moduleClass, token, true) ?? registrationLineWhere(text, moduleClass, token, false)
  );
}

function registrationLineWhere(
  text: string,
  moduleClass: string,
  token: string,
  ownLinesOnly: boolean,
): number | undefined {
  const lines = text.split('\n');
  const name = moduleClass.replace(/[$]/g, '\\$&');
  const classAt = lines.findIndex((l) => new RegExp(`\\bclass\\s+${name}\\b`).test(l));
  const escaped = token.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const mention = new RegExp(`(?<![\\w$])${escaped}(?![\\w$])`);
  // Another provider's pointer at it: `useExisting: Logger`, `inject: [Config, Logger]` (compiled: `common_1.Logger`).
  const pointer = new RegExp(`(?:useExisting\\s*:\\s*|inject\\s*:\\s*\\[[^\\]]*?)(?:[\\w$]+\\.)?${escaped}(?![\\w$])`);
  const names = (i: number) =>
    i !== classAt &&
    mention.test(lines[i]!) &&
    !/^\s*import\b|\brequire\(/.test(lines[i]!) &&
    !(ownLinesOnly && pointer.test(lines[i]!));
  if (classAt >= 0) {
    for (let i = classAt - 1; i >= 0 && i >= classAt - 200; i--) {
      if (names(i)) return i + 1;
      if (/@Module\s*\(/.test(lines[i]!)) break;
    }
    const decorated = new RegExp(`^\\s*\\],\\s*${name}\\)`);
    for (let i = classAt + 1; i < lines.length && i <= classAt + 200; i++) {
      if (names(i)) return i + 1;
      if (decorated.test(lines[i]!)) break;
    }
  }
  let best: number | undefined;
  for (let i = 0; i < lines.length; i++)
    if (names(i) && (best === undefined || Math.abs(i - classAt) < Math.abs(best - classAt))) best = i;
  return best === undefined ? undefined : best + 1;
}

/**
 * Finds a method's source, or with no method its class's declaration (an untouched bean's line, for code scanning),
 * or with `registered` the line where the module class `className` registers that token (a library's class the
 * application lists in its providers, which has no file of its own there): `file` as the report names its bean's
 * (see origins/declared-class.ts's applicationPath).
 */
export type MemberSourceFinder = (
  file: string | undefined,
  className: string | undefined,
  method?: string,
  registered?: string,
) => MemberSource | undefined;

/**
 * Finds methods' sources for the reports of one process. An answer is kept (a method does not move while the
 * process runs, and a report is rebuilt every few seconds); the files' texts only for the turn that read them,
 * since one report asks for every method of a file at once and the next asks nothing new.
 */
export function memberSourceFinder(): MemberSourceFinder {
  const texts = new Map<string, string | null>();
  const answers = new Map<string, MemberSource | null>();
  const textOf = (file: string): string | null => {
    let text = texts.get(file);
    if (text === undefined) {
      if (texts.size === 0) queueMicrotask(() => texts.clear());
      try {
        text = readFileSync(applicationFile(file), 'utf8');
      } catch {
        text = null;
      }
      texts.set(file, text);
    }
    return text;
  };
  return (file, className, method, registered) => {
    if (file === undefined) return undefined;
    const key = `${file}\0${className ?? ''}\0${method ?? ''}\0${registered ?? ''}`;
    let answer = answers.get(key);
    if (answer === undefined) {
      let text = textOf(file);
      // A TypeScript file named through a map where it is not on disk (an image of dist/ alone): the line is found
      // in the compiled file, and the map gives the TypeScript's.
      const original = text === null ? applicationFile(file) : undefined;
      const compiled = original !== undefined ? compiledFileNaming(original) : undefined;
      if (compiled !== undefined) text = textOf(compiled);
      let line = text === null ? undefined : lineIn(text, className, method, registered);
      if (compiled !== undefined && line !== undefined) {
        const at = sourceMapFor(compiled)?.originalLineStart(line);
        line = at !== undefined && at.source === original ? at.line : undefined;
      }
      answer = line === undefined ? null : { file, line };
      answers.set(key, answer);
    }
    return answer ?? undefined;
  };
}

/** The line in `text` a {@link MemberSourceFinder} asks for: a method's, a registration's, or a class's. */
function lineIn(
  text: string,
  className: string | undefined,
  method: string | undefined,
  registered: string | undefined,
): number | undefined {
  if (method !== undefined) return methodLine(text, className, method);
  if (className === undefined) return undefined;
  if (registered !== undefined) return registrationLine(text, className, registered) ?? classLine(text, className);
  return classLine(text, className);
}

/**
 * The prototype on `proto`'s chain whose own code `method` is: the deepest one holding the same original function
 * (the tracker's wrapper shadowing an inherited method on the bean's class stands for the base's function).
 * Undefined when no prototype of the chain holds it, or a Proxy's traps threw.
 */
export function methodOwner(proto: object, method: string): object | undefined {
  try {
    let fn: Function | undefined;
    let owner: object | undefined;
    for (let p: object | null = proto, depth = 0; p !== null && depth < 64; p = Object.getPrototypeOf(p), depth++) {
      const d = Object.getOwnPropertyDescriptor(p, method);
      if (d === undefined || typeof d.value !== 'function') continue;
      const original = originalOf(d.value as Function);
      if (fn === undefined) fn = original;
      if (original === fn) owner = p;
    }
    return owner;
  } catch {
    return undefined; // a prototype that is a Proxy, whose traps threw
  }
}

/** The class whose prototype `owner` is, when it names one. */
export function classOf(owner: object): Function | undefined {
  try {
    const cls: unknown = Object.getOwnPropertyDescriptor(owner, 'constructor')?.value;
    return typeof cls === 'function' ? cls : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where an inherited method is: the class of `proto`'s chain whose own code it is ({@link methodOwner}), when that
 * is not `proto`'s own class (`ItemsRepository extends BaseRepository`: `findAll` is in the base's file, at its
 * line there). Its file as the reports name it (its module's, through the build's maps), or undefined when the
 * origins do not know it (a base class no module exports: then, most often, it lives in the bean's own file).
 */
export function inheritedFrom(
  proto: object,
  method: string,
  origins: ClassOriginIndex,
): { readonly file?: string; readonly className: string } | undefined {
  const owner = methodOwner(proto, method);
  if (owner === undefined || owner === proto) return undefined;
  const cls = classOf(owner);
  if (cls === undefined || cls.name === '') return undefined;
  const file = origins.fileOf(cls);
  return { ...(file !== undefined ? { file } : {}), className: originalClassName(cls) ?? cls.name };
}
