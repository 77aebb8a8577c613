/**
 * One catalog of error codes (src/shared/error-codes.ts), one page documenting them (docs/errors.md): a code added
 * to either alone fails here.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ERROR_CODES } from '../../src/shared/error-codes';
import { UNSATISFIED_LINK_CODES } from '../../src/sketch/native/errors';

const DOCS = fs.readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'errors.md'), 'utf8');
/** Each code is documented under a heading of its own. */
const documented = [...DOCS.matchAll(/^## (\S+)$/gm)].map((m) => m[1]!);

describe('error codes', () => {
  it('documents every code of the catalog in docs/errors.md, and no other', () => {
    expect([...documented].sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it('names each code once, in the ERR_<AREA>_<WHAT> style, with a line saying what to fix', () => {
    expect(new Set(documented).size).toBe(documented.length);
    for (const [code, fix] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^ERR_[A-Z]+_[A-Z0-9_]+$/);
      expect(fix).not.toMatch(/\n/);
      expect(fix.length).toBeGreaterThan(20);
    }
  });

  it('keeps the codes users already branch on', () => {
    expect(ERROR_CODES).toHaveProperty('ERR_SKETCH_THRESHOLD');
    expect(Object.values(UNSATISFIED_LINK_CODES)).toEqual([
      'ERR_SKETCH_NATIVE_NO_BINARY',
      'ERR_SKETCH_NATIVE_CHECKSUM',
      'ERR_SKETCH_NATIVE_WRONG_ARCH',
      'ERR_SKETCH_NATIVE_WRONG_LIBC',
      'ERR_SKETCH_NATIVE_NOEXEC_TEMP',
      'ERR_SKETCH_NATIVE_ADDONS_DISABLED',
      'ERR_SKETCH_NATIVE_TEMP_NOT_WRITABLE',
      'ERR_SKETCH_NATIVE_ABI_MISMATCH',
      'ERR_SKETCH_NATIVE_LOAD_FAILED',
    ]);
  });
});
