/**
 * Must equal CMS_ABI_VERSION in native/cms.h: the JS fast path reads and writes the counters directly, so
 * any change to the hash or the layout is an ABI change even when no signature moves.
 */
export const EXPECTED_ABI_VERSION = 1;

/** Opaque handle to a native `cms_t`. */
export type NativeSketchHandle = { readonly __nativeSketch: unique symbol };

/** Typed wrappers over the C functions of native/cms.h. */
export interface NativeBindings {
  abiVersion(): number;
  create(width: number, depth: number, slots: number, seed: number): NativeSketchHandle | null;
  destroy(s: NativeSketchHandle): void;
  counters(s: NativeSketchHandle): unknown;
  width(s: NativeSketchHandle): number;
  depth(s: NativeSketchHandle): number;
  slots(s: NativeSketchHandle): number;
  memoryBytes(s: NativeSketchHandle): number;
  rowMul(s: NativeSketchHandle, row: number): number;
  rowAdd(s: NativeSketchHandle, row: number): number;
  fingerprint(key: Uint8Array, len: number, out: Uint32Array): void;
  add(s: NativeSketchHandle, slot: number, key: Uint8Array, len: number, count: number): number;
  estimate(s: NativeSketchHandle, key: Uint8Array, len: number): number;
  addBatch(
    s: NativeSketchHandle,
    slot: number,
    keys: Uint8Array,
    ends: Uint32Array,
    n: number,
    out: Uint32Array | null,
  ): void;
  merge(dst: NativeSketchHandle, src: NativeSketchHandle): number;
  clearSlot(s: NativeSketchHandle, slot: number): void;
  clear(s: NativeSketchHandle): void;
  /** An ArrayBuffer over native memory, without copy (koffi.view). */
  view(pointer: unknown, bytes: number): ArrayBuffer;
}

/**
 * The parts of koffi the bindings use, stated structurally: koffi's own declarations are ESM-only, and a
 * public declaration that imported them would not type-check in a CommonJS project under node16 resolution.
 */
export interface NativeLibraryHandle {
  /** Declares a C function from its prototype (koffi's `lib.func`). */
  func(declaration: string): (...args: unknown[]) => unknown;
}

/** The koffi module, as far as the bindings need it. */
export interface KoffiViews {
  view(pointer: unknown, bytes: number): ArrayBuffer;
}

/** Declares every function once per loaded library. Throws koffi's error when a symbol is missing. */
export function bind(koffi: KoffiViews, lib: NativeLibraryHandle): NativeBindings {
  const f = (decl: string): ((...args: unknown[]) => unknown) => lib.func(decl);
  const abi = f('uint32_t cms_abi_version()');
  const create = f('void *cms_create(uint32_t width, uint32_t depth, uint32_t slots, uint32_t seed)');
  const destroy = f('void cms_destroy(void *s)');
  const counters = f('void *cms_counters(void *s)');
  const width = f('uint32_t cms_width(void *s)');
  const depth = f('uint32_t cms_depth(void *s)');
  const slots = f('uint32_t cms_slots(void *s)');
  const memoryBytes = f('double cms_memory_bytes(void *s)');
  const rowMul = f('uint32_t cms_row_mul(void *s, uint32_t row)');
  const rowAdd = f('uint32_t cms_row_add(void *s, uint32_t row)');
  const fingerprint = f('void cms_fingerprint(const uint8_t *key, size_t len, _Out_ uint32_t *out)');
  const add = f('uint32_t cms_add(void *s, uint32_t slot, const uint8_t *key, size_t len, uint32_t count)');
  const estimate = f('uint32_t cms_estimate(void *s, const uint8_t *key, size_t len)');
  const addBatch = f(
    'void cms_add_batch(void *s, uint32_t slot, const uint8_t *keys, const uint32_t *ends, uint32_t n, _Out_ uint32_t *out)',
  );
  const merge = f('int cms_merge(void *dst, void *src)');
  const clearSlot = f('void cms_clear_slot(void *s, uint32_t slot)');
  const clear = f('void cms_clear(void *s)');
  return {
    abiVersion: () => abi() as number,
    create: (w, d, s, seed) => (create(w, d, s, seed) as NativeSketchHandle | null) ?? null,
    destroy: (s) => void destroy(s),
    counters: (s) => counters(s),
    width: (s) => width(s) as number,
    depth: (s) => depth(s) as number,
    slots: (s) => slots(s) as number,
    memoryBytes: (s) => memoryBytes(s) as number,
    rowMul: (s, r) => rowMul(s, r) as number,
    rowAdd: (s, r) => rowAdd(s, r) as number,
    fingerprint: (k, n, out) => void fingerprint(k, n, out),
    add: (s, slot, k, n, c) => add(s, slot, k, n, c) as number,
    estimate: (s, k, n) => estimate(s, k, n) as number,
    addBatch: (s, slot, keys, ends, n, out) => void addBatch(s, slot, keys, ends, n, out),
    merge: (d, s) => merge(d, s) as number,
    clearSlot: (s, slot) => void clearSlot(s, slot),
    clear: (s) => void clear(s),
    view: (p, bytes) => koffi.view(p, bytes),
  };
}
