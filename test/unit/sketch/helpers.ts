import { setLogger, type DiagLogger } from '../../../src/shared/logger';
import { recordingLogger } from '../../support/logs';
import { loadNativeLibrary, type NativeLibrary } from '../../../src/sketch/native/loader';

/** Deterministic PRNG (mulberry32) so a failing run can be replayed. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Sampler of ranks 0..n-1 with P(rank k) ∝ 1 / (k + 1)^s. */
export function zipf(n: number, s: number, random: () => number): () => number {
  const cdf = new Float64Array(n);
  let acc = 0;
  for (let k = 0; k < n; k++) cdf[k] = acc += 1 / Math.pow(k + 1, s);
  return () => {
    const u = random() * acc;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

let lib: NativeLibrary | undefined;

/** The packaged linux/darwin/win32 binary, loaded in place and quietly, for tests that are not about loading. */
export function testLibrary(): NativeLibrary {
  if (lib === undefined) {
    const previous = setLogger(null);
    try {
      lib = loadNativeLibrary({ inPlace: true });
    } finally {
      setLogger(previous);
    }
  }
  return lib;
}

/** A logger that records lines. */
export function captureLogger(): { lines: string[]; logger: DiagLogger } {
  return recordingLogger();
}
