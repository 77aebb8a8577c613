import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../../../support/temp';
import { pathToFileURL } from 'node:url';
import {
  clearSourceMaps,
  mapSources,
  positionOfOffset,
  SourceMap,
  sourceMapFor,
} from '../../../../src/ghost/origins/source-map';

/** Base64 VLQ of one number, the spec's way, to write mappings by hand. */
function vlq(n: number): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let v = n < 0 ? (-n << 1) | 1 : n << 1;
  let out = '';
  do {
    let digit = v & 31;
    v >>>= 5;
    if (v > 0) digit |= 32;
    out += chars[digit];
  } while (v > 0);
  return out;
}

describe('source maps', () => {
  afterEach(() => clearSourceMaps());

  it('decodes VLQ segments, relative across segments and lines, with names', () => {
    // line 1: col 0 → a.ts 1:0; col 6 → a.ts 1:13 name 0 (Guard). line 2: col 4 → b.ts 10:2 name 1 (Big)
    const mappings = [
      `${vlq(0)}${vlq(0)}${vlq(0)}${vlq(0)},${vlq(6)}${vlq(0)}${vlq(0)}${vlq(13)}${vlq(0)}`,
      `${vlq(4)}${vlq(1)}${vlq(9)}${vlq(-11)}${vlq(1)}`,
    ].join(';');
    const map = new SourceMap(mappings, ['/src/a.ts', '/src/b.ts'], ['Guard', 'Big']);
    expect(map.originalPositionFor(1, 0)).toEqual({ source: '/src/a.ts', line: 1, column: 0 });
    expect(map.originalPositionFor(1, 9)).toEqual({ source: '/src/a.ts', line: 1, column: 13, name: 'Guard' });
    expect(map.originalPositionFor(2, 4)).toEqual({ source: '/src/b.ts', line: 10, column: 2, name: 'Big' });
    expect(map.originalPositionFor(2, 0)).toBeUndefined();
    expect(map.originalPositionFor(3, 0)).toBeUndefined();
    // Where a line starts: its first segment, past the indentation a column of 0 finds nothing in.
    expect(map.originalLineStart(2)).toEqual({ source: '/src/b.ts', line: 10, column: 2, name: 'Big' });
    expect(map.originalLineStart(1)).toEqual({ source: '/src/a.ts', line: 1, column: 0 });
    expect(map.originalLineStart(3)).toBeUndefined();
  });

  it("reads a bundler's map from the file's comment, a .map beside it, or a data: URL", () => {
    const dir = tempDir('maps');
    fs.mkdirSync(path.join(dir, 'src'));
    fs.writeFileSync(
      path.join(dir, 'src', 'guard.ts'),
      'export class AppUserStatusGuard {\n  canActivate() {\n    return true;\n  }\n}\n',
    );
    const esbuild = require('esbuild');
    for (const sourcemap of [true, 'inline'] as const) {
      const out = path.join(dir, `out-${String(sourcemap)}.js`);
      esbuild.buildSync({
        entryPoints: [path.join(dir, 'src', 'guard.ts')],
        bundle: true,
        minify: true,
        format: 'cjs',
        platform: 'node',
        outfile: out,
        sourcemap,
        logLevel: 'silent',
      });
      const text = fs.readFileSync(out, 'utf8');
      const at = positionOfOffset(text, text.indexOf('canActivate'));
      const original = sourceMapFor(out)?.originalPositionFor(at.line, at.column);
      expect(original).toMatchObject({ source: path.join(dir, 'src', 'guard.ts'), line: 2, column: 2 });
    }
    expect(sourceMapFor(path.join(dir, 'src', 'guard.ts'))).toBeUndefined();
  });

  it("names a compiled file's originals alone (mapSources): relative and file:// sources as paths", () => {
    const dir = tempDir('map-sources');
    const compiled = path.join(dir, 'dist', 'items.service.js');
    fs.mkdirSync(path.dirname(compiled));
    fs.writeFileSync(compiled, `"use strict";\n//# sourceMappingURL=items.service.js.map\n`);
    const swc = pathToFileURL(path.join(dir, 'src', 'swc.ts')).href;
    fs.writeFileSync(
      `${compiled}.map`,
      JSON.stringify({ version: 3, sources: ['../src/items.service.ts', swc], names: [], mappings: 'AAAA' }),
    );
    expect(mapSources(compiled)).toEqual([path.join(dir, 'src', 'items.service.ts'), path.join(dir, 'src', 'swc.ts')]);
    // a file without a map has none, and asking again reads nothing (the answer is kept)
    const plain = path.join(dir, 'dist', 'plain.js');
    fs.writeFileSync(plain, 'module.exports = 1;\n');
    expect(mapSources(plain)).toBeUndefined();
    fs.writeFileSync(`${plain}.map`, JSON.stringify({ version: 3, sources: ['x.ts'], mappings: '' }));
    expect(mapSources(plain)).toBeUndefined();
  });

  it('turns an offset into a 1-based line and 0-based column', () => {
    expect(positionOfOffset('ab\ncd\nef', 0)).toEqual({ line: 1, column: 0 });
    expect(positionOfOffset('ab\ncd\nef', 4)).toEqual({ line: 2, column: 1 });
    expect(positionOfOffset('ab\ncd\nef', 6)).toEqual({ line: 3, column: 0 });
  });
});
