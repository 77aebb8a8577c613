/**
 * The part of semver's range grammar the module definitions use: `*`, comparator sets such as `>=10.0.0 <13`
 * (partial versions allowed: `<13` is `<13.0.0`), and alternatives joined by `||`. A prerelease version is not
 * supported by a bounded range (as semver without `includePrerelease`): hooks are tested on releases.
 */

/** A hooked package loaded in a version outside every range of its definitions: left unpatched. */
export interface UnsupportedPackage {
  readonly package: string;
  /** Undefined when its package.json could not be read. */
  readonly version?: string;
  /** The ranges diag-instrumentation supports. */
  readonly supported: readonly string[];
}

type Triple = readonly [number, number, number];

const VERSION = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const COMPARATOR = /^(>=|<=|>|<|=)?(.+)$/;

function parse(version: string): { triple: Triple; prerelease: boolean } | undefined {
  const m = VERSION.exec(version.trim());
  if (!m) return undefined;
  return { triple: [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)], prerelease: m[4] !== undefined };
}

function compare(a: Triple, b: Triple): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

function satisfiesSet(version: Triple, set: string): boolean {
  for (const comparator of set.trim().split(/\s+/)) {
    if (comparator === '*' || comparator === '') continue;
    const m = COMPARATOR.exec(comparator);
    const bound = m ? parse(m[2]) : undefined;
    if (!m || !bound) throw new RangeError(`unsupported version range comparator "${comparator}"`);
    const c = compare(version, bound.triple);
    const ok = m[1] === '>=' ? c >= 0 : m[1] === '<=' ? c <= 0 : m[1] === '>' ? c > 0 : m[1] === '<' ? c < 0 : c === 0;
    if (!ok) return false;
  }
  return true;
}

/**
 * Whether `version` satisfies any of `ranges`. An unknown version (no readable package.json) is supported only
 * by `*`, as OpenTelemetry's instrumentations decide. Throws a RangeError on a range outside the grammar above.
 */
export function isSupportedVersion(ranges: readonly string[], version: string | undefined): boolean {
  if (ranges.includes('*')) return true;
  const parsed = version === undefined ? undefined : parse(version);
  if (parsed === undefined || parsed.prerelease) return false;
  return ranges.some((range) => range.split('||').some((set) => satisfiesSet(parsed.triple, set)));
}
