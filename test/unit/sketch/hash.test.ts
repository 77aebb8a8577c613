import { fingerprint, fp, utf8Length } from '../../../src/sketch/native/hash';
import { CountMinSketch } from '../../../src/sketch/count-min-sketch';
import { rng, testLibrary } from './helpers';

function randomString(random: () => number): string {
  const pools = [
    () => String.fromCharCode(32 + Math.floor(random() * 95)),
    () => String.fromCharCode(0x80 + Math.floor(random() * 0x780)),
    () => String.fromCharCode(0x800 + Math.floor(random() * 0xd000)),
    () => String.fromCodePoint(0x10000 + Math.floor(random() * 0xfffff)),
    () => String.fromCharCode(0xd800 + Math.floor(random() * 0x800)), // lone surrogates
  ];
  const len = Math.floor(random() * 24);
  let s = '';
  const asciiOnly = random() < 0.5;
  for (let i = 0; i < len; i++) s += asciiOnly ? pools[0]() : pools[Math.floor(random() * pools.length)]();
  return s;
}

describe('JS fingerprint mirrors cms_fingerprint', () => {
  const { bindings } = testLibrary();

  it('agrees with the C library on 20,000 random ASCII and Unicode keys, lone surrogates included', () => {
    const random = rng(7);
    const out = new Uint32Array(2);
    for (let i = 0; i < 20000; i++) {
      const key = randomString(random);
      const bytes = Buffer.from(key, 'utf8');
      bindings.fingerprint(bytes, bytes.length, out);
      fingerprint(key);
      if (fp.a >>> 0 !== out[0] || fp.b >>> 0 !== out[1]) {
        throw new Error(
          `fingerprint differs for ${JSON.stringify(key)}: js ${fp.a >>> 0},${fp.b >>> 0} c ${out[0]},${out[1]}`,
        );
      }
      expect(utf8Length(key)).toBe(bytes.length);
    }
  });

  it('counts identically through the JS path (add) and the C batch path (addMany)', () => {
    const random = rng(11);
    const keys = Array.from({ length: 5000 }, () => randomString(random));
    const lib = testLibrary();
    for (const width of [1000, 1024]) {
      const viaJs = new CountMinSketch({ width, depth: 5, library: lib });
      const viaC = new CountMinSketch({ width, depth: 5, library: lib });
      const jsEstimates = keys.map((k) => viaJs.add(k));
      const cEstimates = Array.from(viaC.addMany(keys));
      expect(cEstimates).toEqual(jsEstimates);
      expect(Buffer.from(viaJs.core.counters.buffer).equals(Buffer.from(viaC.core.counters.buffer))).toBe(true);
      viaJs.close();
      viaC.close();
    }
  });
});
