/**
 * The file the reports name for a class: its TypeScript through the compiled file's map, also where the TypeScript
 * is not on disk (an image holding dist/ and its maps, not src/), as long as the map names one such file inside the
 * application's directory; else the compiled file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../../../support/temp';
import { compiledWithMap as compiled, writeFile as write } from '../../../support/compiled-files';
import { clearSourceMaps } from '../../../../src/ghost/origins/source-map';
import { compiledFileNaming, reportedFileOf } from '../../../../src/ghost/origins/declared-class';

describe('reportedFileOf', () => {
  const cwd = process.cwd();
  let image: string;
  beforeEach(() => {
    image = fs.realpathSync(tempDir('image'));
    write(path.join(image, 'package.json'), '{"name":"api"}');
    process.chdir(image);
  });
  afterEach(() => {
    process.chdir(cwd);
    clearSourceMaps();
  });

  it('names the one TypeScript file a map names though it is not there, and remembers the compiled file', () => {
    const js = compiled(path.join(image, 'dist', 'orders.service.js'), ['../src/orders.service.ts']);
    const ts = path.join(image, 'src', 'orders.service.ts');
    expect(reportedFileOf(js)).toBe(ts);
    expect(compiledFileNaming(ts)).toBe(js);
  });

  it('names the TypeScript on disk when it is there, as before', () => {
    write(path.join(image, 'src', 'users.service.ts'), 'export class UsersService {}\n');
    const js = compiled(path.join(image, 'dist', 'users.service.js'), ['../src/users.service.ts']);
    expect(reportedFileOf(js)).toBe(path.join(image, 'src', 'users.service.ts'));
  });

  it('keeps the compiled file for a map built elsewhere, a bundle, a library, or a JavaScript source', () => {
    const elsewhere = compiled(path.join(image, 'dist', 'a.js'), ['/build/somewhere/src/a.ts']);
    const bundle = compiled(path.join(image, 'dist', 'main.js'), ['../src/main.ts', '../src/app.module.ts']);
    const library = compiled(path.join(image, 'dist', 'lib.js'), ['../node_modules/lib/src/lib.ts']);
    const babel = compiled(path.join(image, 'dist', 'util.js'), ['../src/util.js']);
    for (const js of [elsewhere, bundle, library, babel]) expect(reportedFileOf(js)).toBe(js);
  });
});
