/**
 * docs/telemetry.md says it mirrors src/telemetry/names.ts: every metric, span, event and attribute name there
 * must appear in the docs' tables, or a new name ships undocumented.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ATTRIBUTES, EVENTS, METRICS, SPANS } from '../../../src/telemetry/names';

const DOC = fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'docs', 'telemetry.md'), 'utf8');

/** The first cell of each table row of the section under `heading`, and every name in backquotes in its rows. */
function section(heading: string): string {
  const start = DOC.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/telemetry.md has no "## ${heading}" section`);
  const next = DOC.indexOf('\n## ', start + 1);
  return DOC.slice(start, next < 0 ? undefined : next);
}

/** Names written in backquotes in the first cell of the section's table rows. */
function firstCells(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const cell = /^\|([^|]*)\|/.exec(line)?.[1];
    if (cell === undefined) continue;
    for (const m of cell.matchAll(/`([^`]+)`/g)) names.add(m[1]!);
  }
  return names;
}

describe('docs/telemetry.md mirrors src/telemetry/names.ts', () => {
  it.each(Object.values(METRICS).map((m) => [m.name, m] as const))(
    'has a row for the metric %s with its unit',
    (name, metric) => {
      const row = section('Metrics')
        .split('\n')
        .find((line) => line.startsWith(`| \`${name}\` |`));
      expect(row).toBeDefined();
      expect(row).toContain(`\`${metric.unit}\``);
    },
  );

  it.each(Object.values(SPANS))('has a row for the span %s', (name) => {
    expect(firstCells(section('Spans'))).toContain(name);
  });

  it.each(Object.values(EVENTS))('has a row for the span event %s', (name) => {
    expect(firstCells(section('Spans'))).toContain(name);
  });

  it.each(Object.values(ATTRIBUTES))('has a row for the attribute %s', (name) => {
    expect(firstCells(section('Attributes'))).toContain(name);
  });

  it('documents no metric that names.ts does not emit', () => {
    const known = new Set<string>(Object.values(METRICS).map((m) => m.name));
    const documented = [...firstCells(section('Metrics'))].filter((n) => n.startsWith('diag.'));
    expect(documented.filter((n) => !known.has(n))).toEqual([]);
  });
});
