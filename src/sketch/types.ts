/** What the actuator and telemetry read about one live sketch. */
export interface SketchInfo {
  /** `<TYPE>_<windowMs>`, e.g. `LIMIT_60000`. */
  readonly id: string;
  /** Over-count error bound: e / width. */
  readonly epsilon: number;
  /** 100 · e^(−depth): the chance, in percent, that an estimate exceeds the bound. */
  readonly deltaPercent: number;
  /** Native memory the sketch really holds, windows included. */
  readonly memoryBytes: number;
}

/** Read-only view of the sketch registry: what the actuator and telemetry depend on. */
export interface SketchRegistryView {
  /** Every active sketch, in id order. */
  list(): SketchInfo[];
  /** One sketch, or undefined for an unknown id. */
  get(id: string): SketchInfo | undefined;
}
