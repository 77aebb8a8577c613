import { WindowedCountMinSketch } from '../window';
import type { SketchStore } from './types';

/** Sketches in this process's native memory only: the default store. */
export const nativeSketchStore: SketchStore = {
  kind: 'native',
  create: (_id, options) => new WindowedCountMinSketch(options),
};
