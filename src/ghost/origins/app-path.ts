/**
 * How the reports name a file of the application (a bean's `source`, a method's `source.file`): relative to the
 * application's root, so that a person opens it and code scanning annotates it (SARIF's `artifactLocation.uri`
 * is resolved against the repository's checkout), never an absolute path of the machine it ran on (issue #43).
 *
 * The root is the working directory, as a process is usually started from its project (`npm start`, a container's
 * WORKDIR). A process started from a folder inside its project (`cd dist && node main.js`) names the files outside
 * that folder relative to the project: the nearest folder at or above the working directory that holds a
 * package.json. A file outside both stays absolute: no root can name it.
 */
import fs from 'node:fs';
import path from 'node:path';

let project: { readonly cwd: string; readonly root: string | undefined } | undefined;

/** The nearest folder at or above the working directory holding a package.json (asked again if it changes). */
function projectRoot(): string | undefined {
  const cwd = process.cwd();
  if (project?.cwd === cwd) return project.root;
  let root: string | undefined;
  for (let dir = cwd; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) {
      root = dir;
      break;
    }
    if (path.dirname(dir) === dir) break;
  }
  project = { cwd, root };
  return root;
}

function inside(file: string, root: string): string | undefined {
  const relative = path.relative(root, file);
  return relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? undefined : relative;
}

/** `file` (absolute, or already a report's name) as the reports name it, with `/` separators. */
export function applicationPath(file: string): string {
  if (!path.isAbsolute(file)) return file.split(path.sep).join('/');
  const cwd = process.cwd();
  const root = projectRoot();
  const relative = inside(file, cwd) ?? (root !== undefined && root !== cwd ? inside(file, root) : undefined);
  return (relative ?? file).split(path.sep).join('/');
}

/** The absolute file a report's name stands for: the inverse of {@link applicationPath}. */
export function applicationFile(name: string): string {
  if (path.isAbsolute(name)) return name;
  const fromCwd = path.resolve(name);
  if (fs.existsSync(fromCwd)) return fromCwd;
  const root = projectRoot();
  return root !== undefined ? path.resolve(root, name) : fromCwd;
}
