import fs from 'node:fs';
import path from 'node:path';

/** The `version` of the package.json in `dir`, or undefined when there is none or it says none. */
export function packageVersionAt(dir: string): string | undefined {
  try {
    const version = (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: unknown })
      .version;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}
