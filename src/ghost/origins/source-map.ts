/**
 * A small reader of source maps (version 3): from a compiled file and a position in it to the original file, line,
 * column and name. A production build bundled and minified (webpack + Terser, esbuild) names its classes `C3` and
 * `_3` and puts them all in `main.js`; its `main.js.map` still knows `AppUserStatusGuard` and
 * `apps/api/src/auth/app-user-status.guard.ts` (issue #44). Our own: the `mappings` are Base64 VLQ and `names` an
 * array, a few dozen lines, not a dependency.
 *
 * API: `sourceMapFor(compiledFile)` → a {@link SourceMap} or undefined (no map, or one it cannot read), cached per
 * file; `map.originalPositionFor(line, column)` → {@link OriginalPosition} or undefined; `map.sourcesContent(source)`
 * → the embedded original text; `positionOfOffset(text, offset)` turns an offset in the compiled text into the line
 * and column the map speaks of; `mapSources(compiledFile)` → the original files alone (a tsc file's one `.ts`), kept
 * without the mappings.
 *
 * Read from disk, synchronously, only after start-up: each application class's file's `sources` once (its `.ts`,
 * issue #43), the whole map only for files that need positions (a class whose name looks mangled, or whose file is
 * a bundle); a map's mappings are decoded line by line as lines are asked for.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where a compiled position came from. Lines are 1-based, columns 0-based (as V8's and the spec's). */
export interface OriginalPosition {
  /** The original file: absolute when the map's `sources` resolve to a path, as written otherwise (`webpack://…`). */
  readonly source: string;
  readonly line: number;
  readonly column: number;
  /** The original identifier at that position (`names`), when the map records one. */
  readonly name?: string;
}

/** One decoded segment: generated column, then source index, line, column and name index (absolute values). */
type Segment = readonly [number, number, number, number, number];

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64.length; i++) DIGIT[BASE64.charCodeAt(i)] = i;

/** A parsed source map; its lines' segments are decoded on first use. */
export class SourceMap {
  /** Per generated line: where its segments start in `mappings`, the running state at that point. */
  private readonly lineStarts: number[] = [];
  private readonly decoded = new Map<number, Segment[]>();
  /** The running source/line/column/name state before each line (VLQ fields other than the column carry over lines). */
  private readonly states: Array<[number, number, number, number]> = [];

  constructor(
    private readonly mappings: string,
    readonly sources: readonly string[],
    readonly names: readonly string[],
    private readonly contents: ReadonlyArray<string | null> = [],
  ) {
    let start = 0;
    for (let i = 0; i <= mappings.length; i++) {
      if (i === mappings.length || mappings.charCodeAt(i) === 59 /* ; */) {
        this.lineStarts.push(start);
        start = i + 1;
      }
    }
  }

  /** The original position of generated `line` (1-based) and `column` (0-based): the segment at or before it. */
  originalPositionFor(line: number, column: number): OriginalPosition | undefined {
    const segments = this.segments(line - 1);
    if (segments === undefined) return undefined;
    let found: Segment | undefined;
    for (const s of segments) {
      if (s[0] > column) break;
      found = s;
    }
    if (found === undefined || found[1] < 0) return undefined;
    const source = this.sources[found[1]];
    if (source === undefined) return undefined;
    const name = found[4] >= 0 ? this.names[found[4]] : undefined;
    return { source, line: found[2] + 1, column: found[3], ...(name !== undefined ? { name } : {}) };
  }

  /**
   * Where generated `line` (1-based) starts in the original: its first segment that names a source. A line's
   * statement begins there, where a column of 0 may lie before the line's first segment (its indentation).
   */
  originalLineStart(line: number): OriginalPosition | undefined {
    const first = this.segments(line - 1)?.find((s) => s[1] >= 0);
    return first === undefined ? undefined : this.originalPositionFor(line, first[0]);
  }

  /** The original text of `source` (one of {@link sources}) when the map embeds it (`sourcesContent`). */
  sourcesContent(source: string): string | undefined {
    const content = this.contents[this.sources.indexOf(source)];
    return typeof content === 'string' ? content : undefined;
  }

  private segments(index: number): Segment[] | undefined {
    if (index < 0 || index >= this.lineStarts.length) return undefined;
    const cached = this.decoded.get(index);
    if (cached !== undefined) return cached;
    // The state carried into a line is the state after the previous one: decode the lines before it first.
    for (let i = this.states.length; i <= index; i++) this.decodeLine(i);
    return this.decoded.get(index);
  }

  private decodeLine(index: number): void {
    const state: [number, number, number, number] = index === 0 ? [0, 0, 0, 0] : [...this.states[index - 1]];
    const out: Segment[] = [];
    const end = index + 1 < this.lineStarts.length ? this.lineStarts[index + 1] - 1 : this.mappings.length;
    let pos = this.lineStarts[index];
    let column = 0;
    const fields: number[] = [];
    while (pos < end) {
      fields.length = 0;
      while (pos < end && this.mappings.charCodeAt(pos) !== 44 /* , */) {
        let value = 0;
        let shift = 0;
        let digit: number;
        do {
          digit = DIGIT[this.mappings.charCodeAt(pos++)] ?? -1;
          if (digit < 0) throw new Error('invalid VLQ in source map');
          value += (digit & 31) << shift;
          shift += 5;
        } while (digit & 32);
        fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
      }
      pos++;
      if (fields.length === 0) continue;
      column += fields[0];
      if (fields.length >= 4) {
        state[0] += fields[1];
        state[1] += fields[2];
        state[2] += fields[3];
        if (fields.length >= 5) state[3] += fields[4];
        out.push([column, state[0], state[1], state[2], fields.length >= 5 ? state[3] : -1]);
      } else {
        out.push([column, -1, -1, -1, -1]);
      }
    }
    out.sort((a, b) => a[0] - b[0]);
    this.states[index] = state;
    this.decoded.set(index, out);
  }
}

/** The 1-based line and 0-based column of `offset` in `text`. */
export function positionOfOffset(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line += 1;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart };
}

const cache = new Map<string, SourceMap | null>();
/** Each compiled file's map's sources alone: what a file's original needs, without holding the mappings. */
const sourcesCache = new Map<string, readonly string[] | null>();
const MAP_COMMENT = /\/\/[#@]\s*sourceMappingURL=([^\s'"]+)\s*$/;

/**
 * The source map of `compiledFile` (absolute), from its `//# sourceMappingURL=` comment (a file beside it or a
 * `data:` URL) or a `<file>.map` beside it; undefined when there is none or it cannot be read. Cached per file.
 */
export function sourceMapFor(compiledFile: string): SourceMap | undefined {
  const known = cache.get(compiledFile);
  if (known !== undefined) return known ?? undefined;
  let map: SourceMap | undefined;
  try {
    const raw = readMap(compiledFile);
    map = raw === undefined ? undefined : new SourceMap(raw.mappings, raw.sources, raw.names, raw.contents);
  } catch {
    map = undefined;
  }
  cache.set(compiledFile, map ?? null);
  return map;
}

/**
 * The original files `compiledFile` (absolute) was built from, as its map's `sources` resolve (absolute paths,
 * or as written); undefined without a readable map. Read once per file; only the list is kept, not the mappings:
 * every bean's file asks this once after ready, and a thousand tsc maps held for the process would be megabytes
 * of heap that nothing reads again.
 */
export function mapSources(compiledFile: string): readonly string[] | undefined {
  const map = cache.get(compiledFile);
  if (map) return map.sources;
  const known = sourcesCache.get(compiledFile);
  if (known !== undefined) return known ?? undefined;
  let sources: readonly string[] | undefined;
  try {
    sources = readMap(compiledFile)?.sources;
  } catch {
    sources = undefined;
  }
  sourcesCache.set(compiledFile, sources ?? null);
  return sources;
}

interface RawMap {
  readonly mappings: string;
  readonly sources: string[];
  readonly names: string[];
  readonly contents: Array<string | null>;
}

/**
 * The last bytes of a file, where its `sourceMappingURL` comment is: a compiled file is not read whole for it (a
 * bundle is megabytes; every bean's file is asked once).
 */
function tailOf(file: string, bytes: number): string {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    fs.readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

function readMap(compiledFile: string): RawMap | undefined {
  // An inline map (`data:` URL) can be as long as the file: read the tail first, the whole file only for one.
  let tail = tailOf(compiledFile, 4096).trimEnd();
  if (/sourceMappingURL=data:/.test(tail) || (!tail.includes('\n') && tail.length >= 4000)) {
    tail = fs.readFileSync(compiledFile, 'utf8').trimEnd();
  }
  const url = MAP_COMMENT.exec(tail.slice(tail.lastIndexOf('\n') + 1))?.[1];
  let json: string | undefined;
  let mapFile = `${compiledFile}.map`;
  if (url?.startsWith('data:')) {
    const comma = url.indexOf(',');
    const data = url.slice(comma + 1);
    json = url.slice(0, comma).endsWith(';base64')
      ? Buffer.from(data, 'base64').toString('utf8')
      : decodeURIComponent(data);
  } else {
    if (url !== undefined) mapFile = path.resolve(path.dirname(compiledFile), decodeURIComponent(url));
    if (!fs.existsSync(mapFile)) return undefined;
    json = fs.readFileSync(mapFile, 'utf8');
  }
  const raw = JSON.parse(json) as {
    version?: number;
    mappings?: unknown;
    sources?: unknown;
    names?: unknown;
    sourceRoot?: unknown;
    sourcesContent?: unknown;
  };
  if (raw.version !== 3 || typeof raw.mappings !== 'string' || !Array.isArray(raw.sources)) return undefined;
  const root = typeof raw.sourceRoot === 'string' ? raw.sourceRoot : '';
  const base = path.dirname(mapFile);
  return {
    mappings: raw.mappings,
    sources: raw.sources.map((s) => resolveSource(String(s ?? ''), root, base)),
    names: Array.isArray(raw.names) ? raw.names.map((n) => String(n)) : [],
    contents: Array.isArray(raw.sourcesContent)
      ? raw.sourcesContent.map((c) => (typeof c === 'string' ? c : null))
      : [],
  };
}

/**
 * A `sources` entry as a path when it is one: relative entries against `sourceRoot` and the map's folder, and
 * webpack's `webpack://<project>/./src/x.ts` as the path after the project name, relative to the working directory.
 */
function resolveSource(source: string, root: string, base: string): string {
  const webpack = /^webpack:\/\/[^/]*\/(?:\.\/)?(.*)$/.exec(source);
  if (webpack) return path.resolve(process.cwd(), webpack[1].replace(/\?.*$/, ''));
  // SWC and Vite may write absolute `file://` URLs: the path they name.
  if (source.startsWith('file://')) {
    try {
      return fileURLToPath(source);
    } catch {
      return source;
    }
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(source)) return source;
  const joined = root === '' ? source : root.endsWith('/') ? root + source : `${root}/${source}`;
  return path.resolve(base, joined);
}

/** Forgets every map read (tests). */
export function clearSourceMaps(): void {
  cache.clear();
  sourcesCache.clear();
}
