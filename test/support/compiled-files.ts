/** Compiled files and their source maps on disk, for the tests of what the origins read through maps. */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Writes `file` with `text`, creating its folders. */
export function writeFile(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** A compiled file and the map beside it, naming `sources` (relative to the map's folder, or absolute); returns `file`. */
export function compiledWithMap(file: string, sources: string[]): string {
  writeFile(file, `"use strict";\n//# sourceMappingURL=${path.basename(file)}.map\n`);
  writeFile(`${file}.map`, JSON.stringify({ version: 3, sources, names: [], mappings: 'AAAA' }));
  return file;
}
