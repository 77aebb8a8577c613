'use strict';
// The reference the sketch hit is measured against (issue #15): a count-min sketch of the same shape and logic
// as ours (16384 × 4 rows × 4 slots, conservative update, the same key fingerprint), counters in a typed array
// on the JS heap, and none of the API's checks or window bookkeeping.
const path = require('node:path');

const { fingerprint, fp, fmix32 } = require(path.resolve(__dirname, '..', '..', 'dist', 'sketch', 'native', 'hash.js'));

class PureJsWindowedCms {
  constructor(width, depth, slots) {
    this.w = width;
    this.d = depth;
    this.s = slots;
    this.shift = 32 - Math.log2(width);
    this.c = new Uint32Array(width * depth * slots);
    this.mul = new Int32Array(depth).map((_, i) => Math.imul(i + 1, 0x9e3779b1) | 1);
    this.add = new Int32Array(depth).map((_, i) => Math.imul(i + 7, 0x85ebca6b));
    this.cells = new Int32Array(depth);
  }
  hit(key) {
    fingerprint(key);
    const a = fp.a,
      b = fp.b,
      c = this.c,
      w = this.w,
      s = this.s,
      cells = this.cells;
    let min = 0xffffffff;
    for (let i = 0; i < this.d; i++) {
      const h = fmix32((a + Math.imul(b, this.mul[i]) + this.add[i]) | 0);
      const cell = (i * w + (h >>> this.shift)) * s;
      cells[i] = cell;
      if (c[cell] < min) min = c[cell];
    }
    const target = min + 1;
    let est = 2 ** 52;
    for (let i = 0; i < this.d; i++) {
      const cell = cells[i];
      if (c[cell] < target) c[cell] = target;
      const sum = c[cell] + c[cell + 1] + c[cell + 2] + c[cell + 3];
      if (sum < est) est = sum;
    }
    return est;
  }
}

/**
 * The same reference written out for 4 rows, as WindowedCountMinSketch's hit is for its default shape: what a
 * JS-heap sketch given the same treatment costs, so that the unrolling is not mistaken for the memory's doing.
 */
class UnrolledPureJsWindowedCms extends PureJsWindowedCms {
  hit(key) {
    fingerprint(key);
    const a = fp.a,
      b = fp.b,
      c = this.c,
      w = this.w,
      shift = this.shift,
      mul = this.mul,
      add = this.add;
    const c0 = (fmix32((a + Math.imul(b, mul[0]) + add[0]) | 0) >>> shift) << 2;
    const c1 = (w + (fmix32((a + Math.imul(b, mul[1]) + add[1]) | 0) >>> shift)) << 2;
    const c2 = (2 * w + (fmix32((a + Math.imul(b, mul[2]) + add[2]) | 0) >>> shift)) << 2;
    const c3 = (3 * w + (fmix32((a + Math.imul(b, mul[3]) + add[3]) | 0) >>> shift)) << 2;
    const v0 = c[c0],
      v1 = c[c1],
      v2 = c[c2],
      v3 = c[c3];
    let min = v0 < v1 ? v0 : v1;
    if (v2 < min) min = v2;
    if (v3 < min) min = v3;
    const target = min + 1;
    if (v0 < target) c[c0] = target;
    if (v1 < target) c[c1] = target;
    if (v2 < target) c[c2] = target;
    if (v3 < target) c[c3] = target;
    let est = c[c0] + c[c0 + 1] + c[c0 + 2] + c[c0 + 3];
    let sum = c[c1] + c[c1 + 1] + c[c1 + 2] + c[c1 + 3];
    if (sum < est) est = sum;
    sum = c[c2] + c[c2 + 1] + c[c2 + 2] + c[c2 + 3];
    if (sum < est) est = sum;
    sum = c[c3] + c[c3 + 1] + c[c3 + 2] + c[c3 + 3];
    if (sum < est) est = sum;
    return est;
  }
}

module.exports = { PureJsWindowedCms, UnrolledPureJsWindowedCms };
