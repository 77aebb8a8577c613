/**
 * The contract a never-called method fulfils, read from the application's TypeScript source: a method that an
 * interface the class implements (or an abstract method of a base class) declares cannot be deleted from the class
 * alone, since the compiler then says the class no longer implements its port. A trial on domain-driven-hexagon
 * read five of its seven never-called methods this way (`findAll`, required by `RepositoryPort`; `toResponse`, by
 * `Mapper`): the finding stands (nobody calls it), the advice is to remove it from the contract too.
 *
 * A reader of text, not a compiler: the class enclosing the method's line, its `extends` and `implements` clauses,
 * each contract found in the same file or through the file's imports (relative paths, `index.ts` re-exports, and the
 * `paths` of the nearest tsconfig.json), and the contract's own `extends`, a few levels deep. What it cannot place
 * it says nothing of. Run by the CLI where the sources are, after a finding is made; never in an application.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Where a method is declared as a requirement: an interface's member or an abstract method. */
export interface Contract {
  readonly kind: 'interface' | 'abstract class';
  readonly name: string;
  /** As the finding's source files are: relative to `root` when inside it. */
  readonly file: string;
  readonly line: number;
}

/** How many files one reader may read (a CLI run's questions share them), and how deep it follows contracts. */
const MAX_FILES = 2000;
const MAX_DEPTH = 6;

/** The files one reader has read, each once, within its budget. */
class Sources {
  private readonly texts = new Map<string, string | undefined>();

  constructor(
    readonly root: string,
    private readonly budget: number,
  ) {}

  read(file: string): string | undefined {
    if (this.texts.has(file)) return this.texts.get(file);
    let text: string | undefined;
    if (this.texts.size < this.budget) {
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch {
        text = undefined;
      }
    }
    this.texts.set(file, text);
    return text;
  }

  relative(file: string): string {
    const rel = path.relative(this.root, file);
    return rel.startsWith('..') || path.isAbsolute(rel) ? file : rel.split(path.sep).join('/');
  }
}

/**
 * The contract that declares `method` of the class whose body holds `line` of `file` (relative to `root`, as a
 * finding's source is), or undefined when none is found: the method is the class's own to delete.
 */
export function contractOf(
  source: { readonly file: string; readonly line: number },
  method: string,
  root: string = process.cwd(),
): Contract | undefined {
  return contractReader(root)(source, method);
}

/** A {@link contractOf} that reads each file once across its questions (a CLI run's findings share their ports). */
export function contractReader(
  root: string = process.cwd(),
): (source: { readonly file: string; readonly line: number }, method: string) => Contract | undefined {
  const sources = new Sources(root, MAX_FILES);
  const answers = new Map<string, Contract | undefined>();
  return (source, method) => {
    const key = `${source.file}:${source.line}#${method}`;
    if (!answers.has(key)) answers.set(key, find(sources, source, method));
    return answers.get(key);
  };
}

function find(
  sources: Sources,
  source: { readonly file: string; readonly line: number },
  method: string,
): Contract | undefined {
  if (!/\.m?tsx?$/.test(source.file)) return undefined;
  const root = sources.root;
  const file = path.resolve(root, source.file);
  const text = sources.read(file);
  if (text === undefined) return undefined;
  const cls = enclosingClass(text, source.line);
  if (cls === undefined) return undefined;
  for (const name of [...cls.implements, ...cls.extends]) {
    const found = findContract(sources, file, text, name, method, 0);
    if (found !== undefined) return found;
  }
  return undefined;
}

interface Heritage {
  readonly extends: readonly string[];
  readonly implements: readonly string[];
}

/** The nearest class declaration at or above `line` (1-based) and its heritage clauses. */
function enclosingClass(text: string, line: number): Heritage | undefined {
  const lines = text.split('\n');
  for (let i = Math.min(line, lines.length) - 1; i >= 0; i--) {
    if (!/\bclass\s+[A-Za-z_$][\w$]*/.test(lines[i]!)) continue;
    const start = lineOffset(lines, i) + lines[i]!.search(/\bclass\s/);
    const head = declarationHead(text, start);
    return head === undefined ? undefined : heritageOf(head.text);
  }
  return undefined;
}

function lineOffset(lines: readonly string[], index: number): number {
  let offset = 0;
  for (let i = 0; i < index; i++) offset += lines[i]!.length + 1;
  return offset;
}

/**
 * Calls `visit` with each character of `text` from `start` (at most `limit` of them) and the depth of type arguments
 * (`<…>`) it stands at, `=>` left out (an arrow's `>` closes nothing); stops when `visit` returns true.
 */
function scan(
  text: string,
  start: number,
  limit: number,
  visit: (i: number, c: string, angle: number) => boolean | void,
): void {
  let angle = 0;
  for (let i = start; i < text.length && i < start + limit; i++) {
    const c = text[i]!;
    if (c === '=' && text[i + 1] === '>') {
      i++;
      continue;
    }
    if (c === '<') angle++;
    else if (c === '>') angle = Math.max(0, angle - 1);
    else if (visit(i, c, angle) === true) return;
  }
}

/**
 * A declaration's text from `start` to the `{` that opens its body (type arguments may hold braces and arrows), and
 * where the body starts.
 */
function declarationHead(text: string, start: number): { text: string; body: number } | undefined {
  let paren = 0;
  let head: { text: string; body: number } | undefined;
  scan(text, start, 4000, (i, c, angle) => {
    if (c === '(') paren++;
    else if (c === ')') paren = Math.max(0, paren - 1);
    else if (c === '{' && angle === 0 && paren === 0) head = { text: text.slice(start, i), body: i + 1 };
    return head !== undefined;
  });
  return head;
}

/** The names an `extends` and an `implements` clause list, without their type arguments. */
function heritageOf(head: string): Heritage {
  const flat = stripTypeArguments(head);
  const ext = /\bextends\s+([\w$.,\s]+?)(?=\bimplements\b|$)/.exec(flat);
  const imp = /\bimplements\s+([\w$.,\s]+)$/.exec(flat);
  const names = (list: string | undefined) =>
    (list ?? '')
      .split(',')
      .map((n) => n.trim().split('.').pop()!)
      .filter((n) => /^[A-Za-z_$][\w$]*$/.test(n));
  // The class's own name and type parameters come before `extends`; only what follows the keywords counts.
  return { extends: names(ext?.[1]), implements: names(imp?.[1]) };
}

/** `A<B<C>, () => D>` is `A`: type arguments removed, at any depth. */
function stripTypeArguments(text: string): string {
  let out = '';
  scan(text, 0, text.length, (_i, c, angle) => {
    if (angle === 0) out += c;
  });
  return out.replace(/\s+/g, ' ').trim();
}

/** `name`'s declaration as seen from `file`, and whether it (or what it extends) declares `method`. */
function findContract(
  sources: Sources,
  file: string,
  text: string,
  name: string,
  method: string,
  depth: number,
): Contract | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const declared = locate(sources, file, text, name, depth);
  if (declared === undefined) return undefined;
  const { file: at, text: source, start, kind, name: declaredAs } = declared;
  const head = declarationHead(source, start);
  if (head === undefined) return undefined;
  const member = memberLine(source, head.body, method, kind);
  if (member !== undefined) return { kind, name: declaredAs, file: sources.relative(at), line: member };
  // An interface's `extends`, an abstract class's own base and interfaces: the method may be declared up there.
  const heritage = heritageOf(head.text);
  for (const parent of [...heritage.extends, ...heritage.implements]) {
    const found = findContract(sources, at, source, parent, method, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

interface Declaration {
  /** Its own name, where an import or a re-export gave it another. */
  readonly name: string;
  readonly file: string;
  readonly text: string;
  /** Offset of the `interface` or `class` keyword. */
  readonly start: number;
  readonly kind: Contract['kind'];
}

/** Where `name` is declared: in `file` itself, else through its imports (and their re-exports). */
function locate(sources: Sources, file: string, text: string, name: string, depth: number): Declaration | undefined {
  const local = declarationIn(text, name);
  if (local !== undefined) return { name, file, text, ...local };
  if (depth > MAX_DEPTH) return undefined;
  for (const { spec, imported } of importsOf(text, name)) {
    const target = resolveSpecifier(sources, file, spec);
    if (target === undefined) continue;
    const found = exported(sources, target, imported, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** An interface or a class (abstract or not: a base class's abstract methods are its contract) named `name`. */
function declarationIn(text: string, name: string): { start: number; kind: Contract['kind'] } | undefined {
  const re = new RegExp(
    `(^|[\\s;}])(?:export\\s+)?(?:declare\\s+)?(?:default\\s+)?(interface|(?:abstract\\s+)?class)\\s+${name}\\b`,
    'm',
  );
  const m = re.exec(text);
  if (m === null) return undefined;
  return { start: m.index + m[0].lastIndexOf(m[2]!), kind: m[2] === 'interface' ? 'interface' : 'abstract class' };
}

/**
 * The `{ … } from '…'` lists of `keyword` (`import`, `export`) in `text` that name `name`: each with its specifier
 * and the name it has on the other side (`import { A as name }`: A).
 */
function namedIn(keyword: string, text: string, name: string): Array<{ spec: string; other: string }> {
  const out: Array<{ spec: string; other: string }> = [];
  const re = new RegExp(`\\b${keyword}\\s+(?:type\\s+)?\\{([^}]*)\\}\\s*from\\s*['"]([^'"]+)['"]`, 'g');
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    for (const part of m[1]!.split(',')) {
      const [other, here] = part
        .replace(/^\s*type\s+/, '')
        .split(/\s+as\s+/)
        .map((s) => s.trim());
      if ((here ?? other) === name && other !== undefined && other !== '') out.push({ spec: m[2]!, other });
    }
  }
  return out;
}

/** The import specifiers that bring `name` into a file, with the name it has there (`import { A as name }`). */
function importsOf(text: string, name: string): Array<{ spec: string; imported: string }> {
  return namedIn('import', text, name).map(({ spec, other }) => ({ spec, imported: other }));
}

/** `name` as `file` exports it: declared there, or re-exported from another file (`export * from`, `export {}`). */
function exported(sources: Sources, file: string, name: string, depth: number): Declaration | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const text = sources.read(file);
  if (text === undefined) return undefined;
  const own = declarationIn(text, name);
  if (own !== undefined) return { name, file, text, ...own };
  for (const { spec, other } of namedIn('export', text, name)) {
    const target = resolveSpecifier(sources, file, spec);
    const found = target === undefined ? undefined : exported(sources, target, other, depth + 1);
    if (found !== undefined) return found;
  }
  const star = /\bexport\s+\*\s+from\s*['"]([^'"]+)['"]/g;
  for (let m = star.exec(text); m !== null; m = star.exec(text)) {
    const target = resolveSpecifier(sources, file, m[1]!);
    const found = target === undefined ? undefined : exported(sources, target, name, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A relative specifier, or one the nearest tsconfig.json's `paths` map, as a TypeScript file that exists. */
function resolveSpecifier(sources: Sources, from: string, spec: string): string | undefined {
  const bases: string[] = [];
  if (spec.startsWith('.')) bases.push(path.resolve(path.dirname(from), spec));
  else bases.push(...pathsTargets(sources, from, spec));
  for (const base of bases) {
    const stem = base.replace(/\.(c|m)?js$/, '');
    for (const candidate of [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.d.ts`, path.join(base, 'index.ts')]) {
      if (candidate.endsWith('.ts') || candidate.endsWith('.tsx')) {
        if (sources.read(candidate) !== undefined) return candidate;
      }
    }
  }
  return undefined;
}

/** What `spec` maps to under the `paths` of the tsconfig.json nearest `from` (up to the root). */
function pathsTargets(sources: Sources, from: string, spec: string): string[] {
  for (let dir = path.dirname(from); ; dir = path.dirname(dir)) {
    const config = path.join(dir, 'tsconfig.json');
    const text = sources.read(config);
    if (text !== undefined) return mapPaths(dir, text, spec);
    if (dir === sources.root || path.dirname(dir) === dir || !dir.startsWith(sources.root)) return [];
  }
}

function mapPaths(dir: string, config: string, spec: string): string[] {
  let options: { baseUrl?: unknown; paths?: unknown } | undefined;
  try {
    // tsconfig.json allows comments and trailing commas.
    const json = config
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:"'])\/\/.*$/gm, '$1')
      .replace(/,(\s*[}\]])/g, '$1');
    options = (JSON.parse(json) as { compilerOptions?: typeof options }).compilerOptions;
  } catch {
    return [];
  }
  const paths = options?.paths;
  if (paths === null || typeof paths !== 'object') return [];
  const base = path.resolve(dir, typeof options?.baseUrl === 'string' ? options.baseUrl : '.');
  const out: string[] = [];
  for (const [pattern, targets] of Object.entries(paths as Record<string, unknown>)) {
    if (!Array.isArray(targets)) continue;
    const star = pattern.indexOf('*');
    let rest: string | undefined;
    if (star === -1) rest = pattern === spec ? '' : undefined;
    else if (spec.startsWith(pattern.slice(0, star)) && spec.endsWith(pattern.slice(star + 1)))
      rest = spec.slice(star, spec.length - (pattern.length - star - 1));
    if (rest === undefined) continue;
    for (const t of targets) if (typeof t === 'string') out.push(path.resolve(base, t.replace('*', rest)));
  }
  return out;
}

/**
 * The line (1-based) of `method`'s declaration among the members of a body starting at `body` (the members at its
 * first level only): any member of an interface, an `abstract` one of a class.
 */
function memberLine(text: string, body: number, method: string, kind: Contract['kind']): number | undefined {
  let depth = 0;
  let lineStart = body;
  const escaped = method.replace(/[$]/g, '\\$');
  const member =
    kind === 'interface'
      ? new RegExp(`^\\s*(?:readonly\\s+)?['"]?${escaped}['"]?\\s*\\??\\s*[(<:]`)
      : new RegExp(`^\\s*(?:(?:public|protected)\\s+)?abstract\\s+(?:readonly\\s+)?${escaped}\\s*\\??\\s*[(<:]`);
  for (let i = body; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '(' || c === '[') depth++;
    else if (c === '}' || c === ')' || c === ']') {
      if (depth === 0) return undefined; // the body ended
      depth--;
    } else if (c === '\n') lineStart = i + 1;
    if (depth === 0 && i === lineStart) {
      const lineEnd = text.indexOf('\n', i);
      const line = text.slice(i, lineEnd === -1 ? text.length : lineEnd);
      if (member.test(line)) return text.slice(0, i).split('\n').length;
    }
  }
  return undefined;
}
