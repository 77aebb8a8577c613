/**
 * A name a minifier gives (`C3`, `_3`, `e`): one or two characters. Real class names that short are rare enough
 * that asking the source map about them costs nothing they would miss. A module of its own: the bean names asked
 * while a container starts test every class name with it, and only a mangled one needs declared-class.ts (with
 * its source maps), which then loads.
 */
export function looksMangled(name: string): boolean {
  return /^[A-Za-z_$][\w$]?$/.test(name);
}
