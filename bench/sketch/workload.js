'use strict';
// The workload shared with native/bench.c: keys "user:<i>", i = xorshift32 state % keys, same seed.
function keysFor(ops, keys) {
  const out = new Array(ops);
  let x = 0x9e3779b9 >>> 0;
  for (let i = 0; i < ops; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = 'user:' + (x % keys);
  }
  return out;
}

/** The median; for an even count, the mean of the two middle values. */
function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The number after `--<name>` on the command line, or `dflt`. */
function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

module.exports = { keysFor, median, arg };
