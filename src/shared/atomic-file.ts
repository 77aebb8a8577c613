import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Writes `text` so that a reader never sees a torn file: a uniquely named temporary file in the same directory
 * (created exclusively, so a planted file or link is never followed), then an atomic rename. Creates the
 * directory if missing. Synchronous on purpose: reports are also written from `process.on('exit')`.
 */
export function writeFileAtomic(file: string, text: string): void {
  const dir = path.dirname(path.resolve(file));
  fs.mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = fs.openSync(tmp, 'wx', 0o644);
    // No fsync: the rename alone keeps readers from ever seeing a torn file, and a report is rewritten at
    // the next start anyway; an fsync per write costs more than the analysis on a busy disk.
    fs.writeSync(fd, text);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, file);
  } catch (err) {
    if (fd !== undefined) {
      try {
        fs.closeSync(fd);
      } catch {
        /* already failing */
      }
    }
    try {
      fs.unlinkSync(tmp);
    } catch {
      /* nothing to clean */
    }
    throw err;
  }
}

/** {@link writeFileAtomic} of `data` as indented JSON and a final newline. */
export function writeJsonAtomic(file: string, data: unknown): void {
  writeFileAtomic(file, `${JSON.stringify(data, null, 2)}\n`);
}
