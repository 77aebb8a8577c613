/**
 * The start-up's raw clock readings, for the whole process: every module load the hooks see, the framework's
 * phases, each lifecycle hook, and our own steps. Nothing here builds an object per event: a load is two
 * `performance.now()` readings (about 45 ns each on Node 20) written into typed arrays, with the filename
 * Node already holds; the timeline is built from these arrays only when someone reads it
 * (src/ghost/reports/boot-profile.ts).
 *
 * Loaded first by the package's entry point, so that the reading taken when this module is evaluated is the
 * start of the instrumentation's own load. One record per process (two instrumentations share it: the
 * process boots once).
 */

/** `performance.now()` when the package's first module was evaluated. */
const loadedAt = performance.now();

/** What the record holds beyond the arrays: the instrumentation's own marks, and ready. */
export interface BootMarks {
  /** The package's first module evaluated. */
  diagLoadStart: number;
  /** The entry point fully evaluated. */
  diagLoadEnd: number;
  /** The first instrumentation's constructor (configuration, state, module definitions, enable). */
  diagEnableStart: number;
  diagEnableEnd: number;
  /** When the module hooks began timing loads (their first enable()). */
  loadsTimedFrom: number;
  /** The process is ready: a NestJS application listening (or its context initialised), or a lazy container's ready. */
  ready: number;
  /** What made it ready: `listen`, `init`, `listening`, `diagReady`. */
  readyCause: string;
}

export const BOOT_MARKS: BootMarks = {
  diagLoadStart: loadedAt,
  diagLoadEnd: NaN,
  diagEnableStart: NaN,
  diagEnableEnd: NaN,
  loadsTimedFrom: NaN,
  ready: NaN,
  readyCause: '',
};

/**
 * Loads recorded at most: a process that never becomes ready (a script, a test runner) stops recording there,
 * at about 2 MB of arrays. Vendure's server loads ~4,700 modules to ready.
 */
const MAX_LOADS = 65_536;
/** Steps (phases, hooks, our own) recorded at most, for the same reason. */
const MAX_STEPS = 65_536;

function grow<T extends Float64Array | Int32Array>(array: T, make: (n: number) => T): T {
  const bigger = make(array.length * 2);
  bigger.set(array);
  return bigger;
}

/** Module loads: index i is one `Module.prototype.load` call, in the order they started. */
export interface LoadRecord {
  readonly count: number;
  readonly files: readonly string[];
  readonly starts: Float64Array;
  /** NaN while the load is under way (a load that throws is ended too: the module hook ends it in `finally`). */
  readonly ends: Float64Array;
  /** How many loads were under way when this one started (0: a load from outside any module). */
  readonly depths: Int32Array;
}

let loadCount = 0;
const loadFiles: string[] = [];
let loadStarts = new Float64Array(2048);
let loadEnds = new Float64Array(2048);
let loadDepths = new Int32Array(2048);
let loadDepth = 0;
let recordingLoads = true;

/** A module load begins: returns its index for {@link loadEnded}, or -1 once recording has stopped. */
export function loadStarted(filename: string): number {
  if (!recordingLoads) return -1;
  const i = loadCount;
  if (i === MAX_LOADS) {
    recordingLoads = false;
    return -1;
  }
  if (i === loadStarts.length) {
    loadStarts = grow(loadStarts, (n) => new Float64Array(n));
    loadEnds = grow(loadEnds, (n) => new Float64Array(n));
    loadDepths = grow(loadDepths, (n) => new Int32Array(n));
  }
  loadCount = i + 1;
  loadFiles.push(filename);
  loadDepths[i] = loadDepth++;
  loadEnds[i] = NaN;
  loadStarts[i] = performance.now();
  return i;
}

export function loadEnded(i: number): void {
  loadEnds[i] = performance.now();
  loadDepth--;
}

/** Stops timing loads (at ready: what loads later is no part of the start-up). */
export function stopRecordingLoads(): void {
  recordingLoads = false;
}

/** Times loads again after {@link stopRecordingLoads}, unless the process is ready or the record is full. */
export function resumeRecordingLoads(): void {
  if (Number.isNaN(BOOT_MARKS.ready) && loadCount < MAX_LOADS) recordingLoads = true;
}

export function isRecordingLoads(): boolean {
  return recordingLoads;
}

/** What a step is: a phase of the framework, a lifecycle hook of one bean, or the instrumentation's own work. */
export const STEP_KIND = { phase: 0, hook: 1, diag: 2, esm: 3 } as const;
export type StepKind = (typeof STEP_KIND)[keyof typeof STEP_KIND];

/** Steps: index i is one timed step, in the order they started. */
export interface StepRecord {
  readonly count: number;
  readonly kinds: Int32Array;
  /** The step's name (`nest.scan`, `onModuleInit`, `diag.patch`): a constant string, not built per step. */
  readonly names: readonly string[];
  /** What it is about: the bean of a hook (`UsersService`), the file a patch applied to; '' for a phase. */
  readonly subjects: readonly string[];
  /** The module of a hook's bean; '' otherwise. */
  readonly groups: readonly string[];
  readonly starts: Float64Array;
  /** When the call returned: before `ends` when it returned a promise that settled later (a wait). */
  readonly returns: Float64Array;
  /** NaN while under way. */
  readonly ends: Float64Array;
}

let stepCount = 0;
let stepKinds = new Int32Array(256);
const stepNames: string[] = [];
const stepSubjects: string[] = [];
const stepGroups: string[] = [];
let stepStarts = new Float64Array(256);
let stepReturns = new Float64Array(256);
let stepEnds = new Float64Array(256);

/** A step begins: returns its index for {@link stepReturned} and {@link stepEnded}, or -1 past the cap. */
export function stepStarted(kind: StepKind, name: string, subject = '', group = ''): number {
  const i = stepCount;
  if (i === MAX_STEPS) return -1;
  if (i === stepStarts.length) {
    stepKinds = grow(stepKinds, (n) => new Int32Array(n));
    stepStarts = grow(stepStarts, (n) => new Float64Array(n));
    stepReturns = grow(stepReturns, (n) => new Float64Array(n));
    stepEnds = grow(stepEnds, (n) => new Float64Array(n));
  }
  stepCount = i + 1;
  stepKinds[i] = kind;
  stepNames.push(name);
  stepSubjects.push(subject);
  stepGroups.push(group);
  stepReturns[i] = NaN;
  stepEnds[i] = NaN;
  stepStarts[i] = performance.now();
  return i;
}

/** The step's call returned a promise: what follows until {@link stepEnded} is waiting. */
export function stepReturned(i: number): void {
  if (i >= 0) stepReturns[i] = performance.now();
}

export function stepEnded(i: number): void {
  if (i < 0) return;
  const now = performance.now();
  if (Number.isNaN(stepReturns[i]!)) stepReturns[i] = now;
  stepEnds[i] = now;
}

/** A step timed elsewhere (two readings already taken), recorded in one call. */
export function stepRecorded(kind: StepKind, name: string, start: number, end: number, subject = '', group = ''): void {
  const i = stepStarted(kind, name, subject, group);
  if (i < 0) return;
  stepStarts[i] = start;
  stepReturns[i] = end;
  stepEnds[i] = end;
}

const atReady: Array<() => void> = [];

/** Marks the process ready, once; later calls change nothing. Returns whether this call marked it. */
export function markReady(cause: string, at = performance.now()): boolean {
  if (!Number.isNaN(BOOT_MARKS.ready)) return false;
  BOOT_MARKS.ready = at;
  BOOT_MARKS.readyCause = cause;
  stopRecordingLoads();
  for (const fn of atReady.splice(0)) {
    try {
      fn();
    } catch {
      // a caller's own guard logs; the mark stands whatever a waiter does
    }
  }
  return true;
}

/**
 * Calls `fn` when the process is marked ready, synchronously inside the marking (schedule the work from it),
 * or now if it already is. Returns the function that unsubscribes it.
 */
export function atProcessReady(fn: () => void): () => void {
  if (!Number.isNaN(BOOT_MARKS.ready)) {
    fn();
    return () => undefined;
  }
  atReady.push(fn);
  return () => {
    const i = atReady.indexOf(fn);
    if (i >= 0) atReady.splice(i, 1);
  };
}

/** Views of the arrays as they are now (the builder reads them; nothing is copied). */
export function bootRecord(): { loads: LoadRecord; steps: StepRecord; marks: Readonly<BootMarks> } {
  return {
    loads: { count: loadCount, files: loadFiles, starts: loadStarts, ends: loadEnds, depths: loadDepths },
    steps: {
      count: stepCount,
      kinds: stepKinds,
      names: stepNames,
      subjects: stepSubjects,
      groups: stepGroups,
      starts: stepStarts,
      returns: stepReturns,
      ends: stepEnds,
    },
    marks: BOOT_MARKS,
  };
}
