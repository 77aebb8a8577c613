const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;

/**
 * Human-readable size in binary units, as the sketch listing shows it: 1 048 576 → `1 MB`, 1 572 864 →
 * `1.5 MB`, 512 → `512 B`. At most two decimals, trailing zeros dropped, so the common sizes read cleanly.
 */
export function humanSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return 'unknown size';
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const text = unit === 0 ? String(Math.round(value)) : value.toFixed(2).replace(/\.?0+$/, '');
  return `${text} ${UNITS[unit]}`;
}
