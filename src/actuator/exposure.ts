/**
 * Which endpoints are served, decided as Spring Boot Actuator decides it: an endpoint is exposed when the
 * include list names it (or is `*`) and the exclude list does not (nor is `*`). Exclude always wins.
 */

/**
 * The endpoint ids this actuator knows. `diag` covers both the start-up report and the live ghost snapshot;
 * `startup` is the bean-creation timeline in Spring Boot's shape.
 */
export const ENDPOINT_IDS = ['health', 'diag', 'startup', 'sketches'] as const;

/** One of {@link ENDPOINT_IDS}. */
export type EndpointId = (typeof ENDPOINT_IDS)[number];

/** The outcome of applying include and exclude. */
export interface Exposure {
  /** Exposed ids, in {@link ENDPOINT_IDS} order. */
  readonly exposed: readonly EndpointId[];
  /** Ids named in include or exclude that this actuator does not know (kept so they can be reported). */
  readonly unknown: readonly string[];
  isExposed(id: EndpointId): boolean;
}

function normalise(ids: readonly string[] | undefined): Set<string> {
  const out = new Set<string>();
  for (const id of ids ?? []) {
    const t = id.trim().toLowerCase();
    if (t !== '') out.add(t);
  }
  return out;
}

/**
 * Applies the include and exclude lists. `include` undefined means nothing is exposed (the server does not
 * start at all in that case; see `startActuator`).
 */
export function resolveExposure(include: readonly string[] | undefined, exclude: readonly string[] = []): Exposure {
  const inc = normalise(include);
  const exc = normalise(exclude);
  const known = new Set<string>(ENDPOINT_IDS);
  const unknown = [...new Set([...inc, ...exc])].filter((id) => id !== '*' && !known.has(id));
  const exposedSet = new Set<EndpointId>();
  for (const id of ENDPOINT_IDS) {
    if ((inc.has('*') || inc.has(id)) && !exc.has('*') && !exc.has(id)) exposedSet.add(id);
  }
  const exposed = ENDPOINT_IDS.filter((id) => exposedSet.has(id));
  return { exposed, unknown, isExposed: (id) => exposedSet.has(id) };
}
