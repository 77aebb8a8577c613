/**
 * Where a method is defined, for the findings a person or code scanning opens: the file the bean's class was
 * loaded from and the line of the method in it. Read after ready, when a report asks, never at start-up.
 *
 * Today the file is the one the class was loaded from (the compiled one for a built application). The source
 * map reader of issue #44 takes over in {@link memberSourceFinder}, the one place that decides which file and
 * line a finding names.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { MemberSource } from './member-verdicts';

/** The line (1-based) of `method`'s definition in `text`, after `class <className>` when that is found. */
export function methodLine(text: string, className: string | undefined, method: string): number | undefined {
  const lines = text.split('\n');
  const name = method.replace(/[$]/g, '\\$&');
  const classAt =
    className === undefined
      ? -1
      : lines.findIndex((l) => new RegExp(`\\bclass\\s+${className.replace(/[$]/g, '\\$&')}\\b`).test(l));
  const definition = new RegExp(
    `^\\s*(?:@\\S+\\s+)*(?:(?:public|private|protected|static|override|async|readonly)\\s+)*\\*?\\s*(?:${name}|\\[['"]${name}['"]\\]|['"]${name}['"])\\s*(?:<[^>]*>)?\\(`,
  );
  for (let i = Math.max(0, classAt); i < lines.length; i++) if (definition.test(lines[i]!)) return i + 1;
  return undefined;
}

/**
 * Finds methods' sources for one report build: `file` as the report names it (relative to `root`, the
 * application's directory, or absolute), each file read once.
 */
export function memberSourceFinder(
  root: string = process.cwd(),
): (file: string | undefined, className: string | undefined, method: string) => MemberSource | undefined {
  const texts = new Map<string, string | null>();
  return (file, className, method) => {
    if (file === undefined) return undefined;
    let text = texts.get(file);
    if (text === undefined) {
      try {
        text = readFileSync(path.resolve(root, file), 'utf8');
      } catch {
        text = null;
      }
      texts.set(file, text);
    }
    if (text === null) return undefined;
    const line = methodLine(text, className, method);
    return line === undefined ? undefined : { file, line };
  };
}
