/**
 * JS mirror of cms_fingerprint in native/cms.c, bit for bit: the fast path hashes in JS and touches the
 * native counters through a view, which is cheaper than a koffi call per key (see docs/sketches.md). The
 * key is hashed as its UTF-8 bytes, produced on the fly, so C callers and JS agree on every string.
 */

/**
 * Results of the last {@link fingerprint} call; module state avoids allocating a pair per key. Declared apart
 * from its export so that this module's writes stay on a local: TypeScript's CommonJS output would make every
 * use of an `export const` a read of `exports.fp` (see `hot-imports` in counters.ts).
 */
const fp = { a: 0, b: 0 };
export { fp };

// State of the byte-wise path for non-ASCII keys (module-level for the same reason).
let sa = 0;
let sb = 0;
let word = 0;
let nbytes = 0;
let total = 0;

function mix(w: number): void {
  let k = Math.imul(w, 0xcc9e2d51);
  k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
  sa ^= k;
  sa = (Math.imul((sa << 13) | (sa >>> 19), 5) + 0xe6546b64) | 0;
  let m = Math.imul(w, 0x85ebca77);
  m = Math.imul((m << 17) | (m >>> 15), 0xc2b2ae3d);
  sb ^= m;
  sb = (Math.imul((sb << 11) | (sb >>> 21), 9) + 0x27d4eb2f) | 0;
}

function pushByte(byte: number): void {
  word |= byte << (nbytes << 3);
  total++;
  if (++nbytes === 4) {
    mix(word);
    word = 0;
    nbytes = 0;
  }
}

/** murmur3's finaliser: a bijection on 32 bits with full avalanche. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * Computes the key's 64-bit fingerprint into {@link fp} (as two signed 32-bit halves). ASCII keys (ids,
 * IPs, routes) run entirely on locals; the first non-ASCII character restarts on the byte-wise path.
 */
export function fingerprint(key: string): void {
  let a = 0x2d358dcc;
  let b = 0x9747b28c | 0;
  const n = key.length;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const c0 = key.charCodeAt(i);
    const c1 = key.charCodeAt(i + 1);
    const c2 = key.charCodeAt(i + 2);
    const c3 = key.charCodeAt(i + 3);
    if ((c0 | c1 | c2 | c3) >= 0x80) return fingerprintUtf8(key);
    const w = c0 | (c1 << 8) | (c2 << 16) | (c3 << 24);
    // The block step of mix() written out on locals: calling mixA/mixB-style helpers here measured 5-8 %
    // slower per sketch hit (bench/sketch, 3 runs each side), and this loop is the hit's hot path.
    let k = Math.imul(w, 0xcc9e2d51);
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
    a ^= k;
    a = (Math.imul((a << 13) | (a >>> 19), 5) + 0xe6546b64) | 0;
    let m = Math.imul(w, 0x85ebca77);
    m = Math.imul((m << 17) | (m >>> 15), 0xc2b2ae3d);
    b ^= m;
    b = (Math.imul((b << 11) | (b >>> 21), 9) + 0x27d4eb2f) | 0;
  }
  if (i < n) {
    let w = 0;
    for (let shift = 0; i < n; i++, shift += 8) {
      const c = key.charCodeAt(i);
      if (c >= 0x80) return fingerprintUtf8(key);
      w |= c << shift;
    }
    let k = Math.imul(w, 0xcc9e2d51);
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
    a ^= k;
    a = (Math.imul((a << 13) | (a >>> 19), 5) + 0xe6546b64) | 0;
    let m = Math.imul(w, 0x85ebca77);
    m = Math.imul((m << 17) | (m >>> 15), 0xc2b2ae3d);
    b ^= m;
    b = (Math.imul((b << 11) | (b >>> 21), 9) + 0x27d4eb2f) | 0;
  }
  fp.a = fmix32(a ^ n);
  fp.b = fmix32(b ^ n ^ 0x165667b1);
}

/** Byte-wise path: encodes UTF-8 on the fly (lone surrogates as U+FFFD, as Buffer.from does). */
function fingerprintUtf8(key: string): void {
  sa = 0x2d358dcc;
  sb = 0x9747b28c | 0;
  word = 0;
  nbytes = 0;
  total = 0;
  const n = key.length;
  for (let i = 0; i < n; i++) {
    let c = key.charCodeAt(i);
    if (c < 0x80) {
      pushByte(c);
    } else if (c < 0x800) {
      pushByte(0xc0 | (c >>> 6));
      pushByte(0x80 | (c & 0x3f));
    } else {
      if (c >= 0xd800 && c < 0xdc00 && i + 1 < n) {
        const d = key.charCodeAt(i + 1);
        if (d >= 0xdc00 && d < 0xe000) {
          const cp = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
          pushByte(0xf0 | (cp >>> 18));
          pushByte(0x80 | ((cp >>> 12) & 0x3f));
          pushByte(0x80 | ((cp >>> 6) & 0x3f));
          pushByte(0x80 | (cp & 0x3f));
          i++;
          continue;
        }
      }
      if (c >= 0xd800 && c < 0xe000) c = 0xfffd;
      pushByte(0xe0 | (c >>> 12));
      pushByte(0x80 | ((c >>> 6) & 0x3f));
      pushByte(0x80 | (c & 0x3f));
    }
  }
  if (nbytes > 0) mix(word);
  fp.a = fmix32(sa ^ total);
  fp.b = fmix32(sb ^ total ^ 0x165667b1);
}

/** UTF-8 length of a string, as Buffer.byteLength computes it, without a native call. */
export function utf8Length(key: string): number {
  const n = key.length;
  let bytes = n;
  for (let i = 0; i < n; i++) {
    const c = key.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (
      c >= 0xd800 &&
      c < 0xdc00 &&
      i + 1 < n &&
      key.charCodeAt(i + 1) >= 0xdc00 &&
      key.charCodeAt(i + 1) < 0xe000
    ) {
      bytes += 2;
      i++;
    } else bytes += 2;
  }
  return bytes;
}
