/**
 * Where a class was declared in the original source, and under which name, when the code that runs is a build: a
 * bundle (webpack, esbuild) puts every class in `main.js`, and a minifier (Terser) renames `AppUserStatusGuard` to
 * `C3`. Through the bundle's source map (./source-map.ts) both come back (issue #44).
 *
 * A class is found in its compiled file by its own source text (`Function.prototype.toString` returns exactly the
 * slice of the file that declares it): one pass over the file indexes every `class` keyword by the text that
 * follows it, so that hundreds of classes cost one scan, not one search each (a 5 MB bundle: one regular
 * expression pass). The map gives the original file and line of the class keyword, and the original name either
 * from the map's `names` (at the class's identifier) or from the original text (`sourcesContent`, or the file on
 * disk) at that position.
 */
import fs from 'node:fs';
import path from 'node:path';
import { mapSources, positionOfOffset, sourceMapFor, type OriginalPosition } from './source-map';
import { looksMangled } from './mangled';

export { looksMangled };

/** A class as its original source declares it. */
export interface DeclaredClass {
  /** The original file (absolute when the map resolves it to a path). */
  readonly source: string;
  readonly line: number;
  /** The name its source gives it, when one could be read. */
  readonly name?: string;
}

/** Characters after `class` that index a class: enough to tell most apart, few enough for `class{}`. */
const PREFIX = 24;
const fnToString = Function.prototype.toString;
const CLASS_KEYWORD = /\bclass\b/g;
// `extends` is no name: a minifier's anonymous subclass reads `class extends M{}` (every subclass a bundle binds
// to a variable), and taking `extends` for its name made three identical bodies ambiguous instead of told apart.
const DECLARATION = /^(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+(?!extends\b)([A-Za-z_$][\w$]*)/;
const COMPILED_NAME = /^class\s+(?!extends\b)([A-Za-z_$][\w$]*)/;

interface CompiledFile {
  readonly text: string;
  /** The first PREFIX characters after each `class` keyword, to the offsets they occur at. */
  readonly classes: Map<string, number[]>;
}

const files = new Map<string, CompiledFile | null>();
const originals = new Map<string, string[] | null>();

/**
 * The original declaration of `cls`, which lives in `compiledFile` (absolute), when that file has a source map and
 * the class can be found in it; undefined otherwise. Never throws.
 */
export function declaredClass(cls: Function, compiledFile: string): DeclaredClass | undefined {
  try {
    const map = sourceMapFor(compiledFile);
    if (map === undefined) return undefined;
    const compiled = compiledOf(compiledFile);
    if (compiled === undefined) return undefined;
    const own = fnToString.call(cls);
    if (!own.startsWith('class')) return undefined;
    const offset = offsetOf(cls, own, compiled);
    if (offset === undefined) return undefined;
    const named = COMPILED_NAME.exec(own);
    // The identifier's mapping carries the original name when the minifier renamed it; the keyword's, the line.
    const at = positionOfOffset(compiled.text, offset);
    const keyword = map.originalPositionFor(at.line, at.column);
    if (keyword === undefined) return undefined;
    let name: string | undefined;
    if (named) {
      const nameAt = positionOfOffset(compiled.text, offset + own.indexOf(named[1], 5));
      name = map.originalPositionFor(nameAt.line, nameAt.column)?.name;
    }
    name ??= nameInOriginal(keyword, map.sourcesContent(keyword.source));
    return { source: keyword.source, line: keyword.line, ...(name !== undefined ? { name } : {}) };
  } catch {
    return undefined;
  }
}

/**
 * Where `cls` is declared in the compiled text. A minified build has many identical class bodies (every module
 * `class{}`, every guard `class{canActivate(){return!0}}`): among them, the one bound to the class's own (mangled)
 * name (`o=class{…}`, `class o{…}`). Two equally likely places are no answer: a wrong name is worse than none.
 */
function offsetOf(cls: Function, own: string, compiled: CompiledFile): number | undefined {
  const { text } = compiled;
  let found: number[];
  if (own.length < PREFIX) {
    found = [];
    for (let at = text.indexOf(own); at !== -1; at = text.indexOf(own, at + 1)) found.push(at);
  } else {
    found = (compiled.classes.get(own.slice(0, PREFIX)) ?? []).filter((at) => text.startsWith(own, at));
  }
  if (found.length <= 1) return found[0];
  const name = cls.name;
  if (typeof name !== 'string' || name === '' || COMPILED_NAME.test(own)) return undefined;
  const bound = new RegExp(`(?:^|[^\\w$.])${name.replace(/\$/g, '\\$')}\\s*=\\s*$`);
  const named = found.filter((at) => bound.test(text.slice(Math.max(0, at - name.length - 8), at)));
  return named.length === 1 ? named[0] : undefined;
}

function compiledOf(file: string): CompiledFile | undefined {
  const known = files.get(file);
  if (known !== undefined) return known ?? undefined;
  let compiled: CompiledFile | undefined;
  try {
    const text = fs.readFileSync(file, 'utf8');
    const classes = new Map<string, number[]>();
    for (const m of text.matchAll(CLASS_KEYWORD)) {
      const key = text.slice(m.index, m.index + PREFIX);
      const list = classes.get(key);
      if (list === undefined) classes.set(key, [m.index]);
      else list.push(m.index);
    }
    compiled = { text, classes };
  } catch {
    compiled = undefined;
  }
  files.set(file, compiled ?? null);
  return compiled;
}

/** The class name declared at `at` in the original text: the map's `sourcesContent`, or the file on disk. */
function nameInOriginal(at: OriginalPosition, content: string | undefined): string | undefined {
  let lines = originals.get(at.source);
  if (lines === undefined) {
    try {
      lines = (content ?? fs.readFileSync(at.source, 'utf8')).split('\n');
    } catch {
      lines = null;
    }
    originals.set(at.source, lines);
  }
  const line = lines?.[at.line - 1];
  if (line === undefined) return undefined;
  return DECLARATION.exec(line.slice(at.column))?.[1] ?? DECLARATION.exec(line.trimStart())?.[1];
}

/**
 * The file a bundle runs from, where its classes are when no module exports them: the process's main script.
 * Undefined when there is none (a REPL, `node -e`).
 */
export function mainScript(): string | undefined {
  const main = process.argv[1];
  if (main === undefined || main === '' || main.startsWith('-')) return undefined;
  try {
    return fs.realpathSync(main);
  } catch {
    return undefined;
  }
}

/**
 * The name the original source gives a class whose name looks mangled, read through the source map of `file` (or
 * of the main script, for a bundle); undefined when the name looks fine or no map tells.
 */
export function originalClassName(cls: Function, file?: string): string | undefined {
  if (typeof cls.name !== 'string' || !looksMangled(cls.name)) return undefined;
  const compiled = file ?? mainScript();
  return compiled === undefined ? undefined : declaredClass(cls, compiled)?.name;
}

/** Forgets every file read (tests). */
export function clearDeclaredClasses(): void {
  files.clear();
  originals.clear();
}

/**
 * The application's own source roots, compiled and original: the folder of its main script
 * (`dist/apps/api/apps/api/src/main.js`), and the folder of the file its source map says it was compiled from
 * (`apps/api/src/main.ts`), each one up when that folder is a `src`. Both, because a bean's file is compared in the
 * space it is known in: a file with no map against the compiled root, a file read through its map against the
 * original root (a trial on a real monorepo built with tsc compared compiled files with the original root, and
 * called every bean of the application shared). Undefined without a main script.
 */
export interface ApplicationRoots {
  readonly compiled: string;
  readonly original?: string;
}

const rootOf = (file: string): string => {
  const dir = path.dirname(file);
  return path.basename(dir) === 'src' ? path.dirname(dir) : dir;
};

export function applicationRoots(): ApplicationRoots | undefined {
  const main = mainScript();
  if (main === undefined) return undefined;
  const original = originalFileOf(main, path.basename(main, path.extname(main)));
  return { compiled: rootOf(main), ...(original !== undefined ? { original: rootOf(original) } : {}) };
}

/**
 * The original file `compiled` was built from, through its source map: the map's source named like `stem`
 * (`main.js` → `main.ts`: a bundle's map lists every module, webpack's externals and runtime first), else its only
 * source that is a file on disk outside node_modules. Undefined without a map or such a source.
 */
export function originalFileOf(
  compiled: string,
  stem = path.basename(compiled, path.extname(compiled)),
): string | undefined {
  const real = realSources(compiled);
  return real?.find((s) => path.basename(s, path.extname(s)) === stem) ?? (real?.length === 1 ? real[0] : undefined);
}

/**
 * The one file `compiled` was compiled from, when its map names exactly one on disk outside node_modules: what tsc,
 * SWC and Babel write per file (`dist/items/items.service.js` → `src/items/items.service.ts`). A bundle's map names
 * many, and which of them holds a class only the class's own text can tell (see {@link declaredClass}).
 */
export function singleOriginalOf(compiled: string): string | undefined {
  if (!COMPILED.test(compiled)) return undefined;
  const real = realSources(compiled);
  return real?.length === 1 ? real[0] : undefined;
}

/** TypeScript files a map names where they are not on disk, each with the compiled file whose map names it. */
const namedWithoutSources = new Map<string, string>();

/**
 * The file the reports name for a class defined in `compiled`: its one original on disk ({@link singleOriginalOf});
 * or, when the application runs without its sources (an image holding `dist/` and its maps, not `src/`), the one
 * TypeScript file the map names, outside node_modules, though it is not there: the file the team edits, in its
 * repository. A line in it is then found through the compiled file and its map ({@link compiledFileNaming}).
 * Otherwise `compiled` itself.
 */
export function reportedFileOf(compiled: string): string {
  const real = singleOriginalOf(compiled);
  if (real !== undefined || !COMPILED.test(compiled)) return real ?? compiled;
  let sources: readonly string[] | undefined;
  try {
    sources = mapSources(compiled);
  } catch {
    sources = undefined;
  }
  const only = sources?.length === 1 ? sources[0]! : undefined;
  // (One on disk is singleOriginalOf's answer above: what is left here is a file that is not there.)
  if (only === undefined || !path.isAbsolute(only) || !/\.[cm]?tsx?$/.test(only)) return compiled;
  if (only.split(path.sep).includes('node_modules')) return compiled;
  // Only where the application's files are named from (its directory, its project): a map built elsewhere with an
  // absolute `sourceRoot` (`/build/src`) names a path that was never the team's.
  if (path.isAbsolute(applicationPath(only))) return compiled;
  namedWithoutSources.set(only, compiled);
  return only;
}

/** The compiled file whose map named `original` (absolute) where it is not on disk ({@link reportedFileOf}). */
export function compiledFileNaming(original: string): string | undefined {
  return namedWithoutSources.get(original);
}

function realSources(compiled: string): string[] | undefined {
  try {
    return mapSources(compiled)?.filter(
      (s) => path.isAbsolute(s) && !s.split(path.sep).includes('node_modules') && fs.existsSync(s),
    );
  } catch {
    return undefined;
  }
}

/** A compiled JavaScript file (its source map, if any, says what it was compiled from). */
const COMPILED = /\.[cm]?js$/;

/**
 * The shared library `file` lies in, when it is outside the application's roots: a file with a map is compared
 * through it (its original against the original root), any file against the compiled root; outside both, the
 * library is named from the original file when there is one (`libs/shared`, not `dist/apps/api/libs/shared`).
 */
export function sharedLibraryIn(file: string, roots: ApplicationRoots): string | undefined {
  if (!COMPILED.test(file)) {
    // Already an original path (a bundle's class read through its map, or TypeScript run as it is).
    return sharedLibraryOf(file, roots.original ?? roots.compiled);
  }
  if (isInside(file, roots.compiled)) return undefined;
  const original = roots.original !== undefined ? originalFileOf(file) : undefined;
  return original !== undefined ? sharedLibraryOf(original, roots.original!) : sharedLibraryOf(file, roots.compiled);
}

function isInside(file: string, root: string): boolean {
  const inside = path.relative(root, path.resolve(file));
  return !inside.startsWith('..') && !path.isAbsolute(inside);
}

/**
 * The shared library a file (absolute, or relative to the working directory) lies in when it is outside `root`:
 * its folder up to its own `src` (`libs/shared/src/db.ts` → `libs/shared`), or its folder. Undefined inside root.
 */
export function sharedLibraryOf(file: string, root: string): string | undefined {
  const absolute = path.resolve(file);
  const inside = path.relative(root, absolute);
  if (!inside.startsWith('..') && !path.isAbsolute(inside)) return undefined;
  const parts = absolute.split(path.sep);
  const src = parts.lastIndexOf('src');
  const library = src > 0 ? parts.slice(0, src).join(path.sep) : path.dirname(absolute);
  const relative = path.relative(process.cwd(), library);
  return (relative.startsWith('..') || path.isAbsolute(relative) ? library : relative || '.').split(path.sep).join('/');
}

/*
 * How the reports name a file of the application (a bean's `source`, a method's `source.file`): relative to the
 * application's root, so that a person opens it and code scanning annotates it (SARIF's `artifactLocation.uri`
 * is resolved against the repository's checkout), never an absolute path of the machine it ran on (issue #43).
 * Here, beside the application's source roots, and not a module of its own: class-origin.ts loads this file while
 * the application starts, and each module loaded before ready is start-up cost (docs/benchmarks.md).
 *
 * The root is the working directory, as a process is usually started from its project (`npm start`, a container's
 * WORKDIR). A process started from a folder inside its project (`cd dist && node main.js`) names the files outside
 * that folder relative to the project: the nearest folder at or above the working directory that holds a
 * package.json. A file outside both stays absolute: no root can name it.
 */

let project: { readonly cwd: string; readonly root: string | undefined } | undefined;

/** The nearest folder at or above the working directory holding a package.json (asked again if it changes). */
function projectRoot(): string | undefined {
  const cwd = process.cwd();
  if (project?.cwd === cwd) return project.root;
  let root: string | undefined;
  for (let dir = cwd; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) {
      root = dir;
      break;
    }
    if (path.dirname(dir) === dir) break;
  }
  project = { cwd, root };
  return root;
}

function inside(file: string, root: string): string | undefined {
  const relative = path.relative(root, file);
  return relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? undefined : relative;
}

/** `file` (absolute, or already a report's name) as the reports name it, with `/` separators. */
export function applicationPath(file: string): string {
  if (!path.isAbsolute(file)) return file.split(path.sep).join('/');
  const cwd = process.cwd();
  const root = projectRoot();
  const relative = inside(file, cwd) ?? (root !== undefined && root !== cwd ? inside(file, root) : undefined);
  return (relative ?? file).split(path.sep).join('/');
}

/** The absolute file a report's name stands for: the inverse of {@link applicationPath}. */
export function applicationFile(name: string): string {
  if (path.isAbsolute(name)) return name;
  const fromCwd = path.resolve(name);
  if (fs.existsSync(fromCwd)) return fromCwd;
  const root = projectRoot();
  return root !== undefined ? path.resolve(root, name) : fromCwd;
}
