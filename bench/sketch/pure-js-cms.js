'use strict';
// The reference the sketch hit is measured against (issue #15): a count-min sketch of the same shape and logic
// as ours (16384 × 4 rows × 4 slots, conservative update, the same key fingerprint), counters in a typed array
// on the JS heap, and none of the API's checks or window bookkeeping.
const path = require('node:path');

const { fingerprint, fp, fmix32 } = require(path.resolve(__dirname, '..', '..', 'dist', 'sketch', 'native', 'hash.js'));

class PureJsWindowedCms {
  constructor(width, depth, slots) {
    this.w = width; this.d = depth; this.s = slots; this.shift = 32 - Math.log2(width);
    this.c = new Uint32Array(width * depth * slots);
    this.mul = new Int32Array(depth).map((_, i) => (Math.imul(i + 1, 0x9e3779b1) | 1));
    this.add = new Int32Array(depth).map((_, i) => Math.imul(i + 7, 0x85ebca6b));
    this.cells = new Int32Array(depth);
  }
  hit(key) {
    fingerprint(key);
    const a = fp.a, b = fp.b, c = this.c, w = this.w, s = this.s, cells = this.cells;
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

module.exports = { PureJsWindowedCms };
