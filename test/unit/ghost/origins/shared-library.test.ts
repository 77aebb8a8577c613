/**
 * Which of an application's beans live in a shared library (#44 §6), on the two layouts Nest's CLI builds a
 * monorepo in. A trial on a real one (nest-cli monorepo mode, tsc and webpack) found every bean of the
 * application marked shared: the root came from the main script's map while the beans' files stayed compiled
 * (tsc), or from a webpack external, the bundle map's first source (webpack).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../../../support/temp';
import { compiledWithMap as compiled, writeFile as write } from '../../../support/compiled-files';
import { clearSourceMaps } from '../../../../src/ghost/origins/source-map';
import { applicationRoots, sharedLibraryIn } from '../../../../src/ghost/origins/declared-class';

function withMain<T>(main: string, fn: () => T): T {
  const saved = process.argv[1];
  process.argv[1] = main;
  try {
    return fn();
  } finally {
    process.argv[1] = saved;
    clearSourceMaps();
  }
}

describe('a shared library of a monorepo', () => {
  it('tsc layout: the application’s own compiled files are its own; a library is named by its source folder', () => {
    const repo = tempDir('mono-tsc');
    for (const f of ['apps/api/src/main.ts', 'apps/api/src/api.service.ts', 'libs/shared/src/clock.ts'])
      write(path.join(repo, f), '');
    const out = path.join(repo, 'dist/apps/api');
    compiled(path.join(out, 'apps/api/src/main.js'), ['../../../../../../apps/api/src/main.ts']);
    compiled(path.join(out, 'apps/api/src/api.service.js'), ['../../../../../../apps/api/src/api.service.ts']);
    compiled(path.join(out, 'libs/shared/src/clock.js'), ['../../../../../../libs/shared/src/clock.ts']);
    withMain(path.join(out, 'apps/api/src/main.js'), () => {
      const roots = applicationRoots()!;
      expect(roots.original).toBe(fs.realpathSync(path.join(repo, 'apps/api')));
      expect(sharedLibraryIn(path.join(out, 'apps/api/src/api.service.js'), roots)).toBeUndefined();
      expect(sharedLibraryIn(path.join(out, 'libs/shared/src/clock.js'), roots)).toBe(
        fs.realpathSync(path.join(repo, 'libs/shared')).split(path.sep).join('/'),
      );
    });
  });

  it('webpack layout: the root is the bundle’s main.ts, not the first source of its map (an external)', () => {
    const repo = tempDir('mono-webpack');
    for (const f of ['apps/api/src/main.ts', 'apps/api/src/api.service.ts', 'libs/shared/src/clock.ts'])
      write(path.join(repo, f), '');
    const main = path.join(repo, 'dist/apps/api/main.js');
    compiled(main, [
      'external commonjs "@nestjs/core"',
      '../../../libs/shared/src/clock.ts',
      '../../../apps/api/src/api.service.ts',
      '../../../apps/api/src/main.ts',
    ]);
    withMain(main, () => {
      const roots = applicationRoots()!;
      expect(roots.original).toBe(fs.realpathSync(path.join(repo, 'apps/api')));
      // A bundle's classes are placed through its map: their files are the originals.
      expect(sharedLibraryIn(path.join(repo, 'apps/api/src/api.service.ts'), roots)).toBeUndefined();
      expect(sharedLibraryIn(path.join(repo, 'libs/shared/src/clock.ts'), roots)).toMatch(/libs\/shared$/);
    });
  });

  it('no map: compiled files against the compiled root (the application run from its source tree)', () => {
    const repo = tempDir('mono-plain');
    write(path.join(repo, 'apps/api/src/main.js'), '');
    write(path.join(repo, 'apps/api/src/api.service.js'), '');
    write(path.join(repo, 'libs/shared/src/clock.js'), '');
    withMain(path.join(repo, 'apps/api/src/main.js'), () => {
      const roots = applicationRoots()!;
      expect(roots.original).toBeUndefined();
      expect(sharedLibraryIn(path.join(repo, 'apps/api/src/api.service.js'), roots)).toBeUndefined();
      expect(sharedLibraryIn(path.join(repo, 'libs/shared/src/clock.js'), roots)).toMatch(/libs\/shared$/);
    });
  });
});
