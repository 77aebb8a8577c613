import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as Koffi from 'koffi';

import { safeLog } from '../../shared/logger';
import { inspectBinary, expectedFormat } from './binary-header';
import { bind, EXPECTED_ABI_VERSION, type NativeBindings, type NativeLibraryHandle } from './bindings';
import { UnsatisfiedLinkError } from './errors';
import { platformTarget, type Libc, type PlatformTarget } from './platform';

/** Environment variable naming a library file to load in place instead of the packaged one. */
export const LIBRARY_PATH_ENV = 'DIAG_SKETCH_LIBRARY';
/** Set to `1` to load the packaged binary from the package directory without copying it to the temp dir. */
export const NO_EXTRACT_ENV = 'DIAG_SKETCH_NO_EXTRACT';

/** How to find and load the native library. Every field is optional; defaults suit production. */
export interface LoaderOptions {
  /** Load this file in place (no extraction, no checksum: it is not ours). Default: `$DIAG_SKETCH_LIBRARY`. */
  readonly libraryPath?: string;
  /** Load the packaged binary where it lies (checksum still verified). Default: `$DIAG_SKETCH_NO_EXTRACT === '1'`. */
  readonly inPlace?: boolean;
  /** Directory holding `<platform>-<arch>[-musl]/` and `SHA256SUMS`. Default: the package's `native-bin/`. */
  readonly binDir?: string;
  /** Where the private extraction directory is created. Default: `os.tmpdir()`. */
  readonly tempDir?: string;
  /** Keep the extracted copy after loading (normally removed at once on POSIX, at exit on Windows). */
  readonly keepExtracted?: boolean;
  /** Select the binary as if running on this platform / arch / libc (tests; cross-checks). */
  readonly platform?: string;
  readonly arch?: string;
  readonly libc?: Libc;
}

/** A loaded native library. */
export interface NativeLibrary {
  readonly bindings: NativeBindings;
  readonly target: PlatformTarget;
  /** The file dlopen loaded (the temp copy when extracted; may be removed since). */
  readonly loadedFrom: string;
  readonly extracted: boolean;
  readonly abiVersion: number;
  /** SHA-256 of the loaded bytes, hex. */
  readonly sha256: string;
  /** The raw koffi library handle, for declaring extra functions (benchmarks). */
  readonly handle: NativeLibraryHandle;
}

const DEFAULT_BIN_DIR = path.resolve(__dirname, '..', '..', '..', 'native-bin');

/** Detects the host's C library; null off Linux. */
export function detectLibc(platform: string = process.platform): Libc {
  if (platform !== 'linux') return null;
  try {
    const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
    if (report?.header !== undefined) return report.header.glibcVersionRuntime ? 'glibc' : 'musl';
  } catch {
    /* report unavailable (permission model); fall back to the loader's file name */
  }
  try {
    if (fs.readdirSync('/lib').some((f) => f.startsWith('ld-musl-'))) return 'musl';
  } catch {
    /* unreadable /lib: assume the common case */
  }
  return 'glibc';
}

function sha256(buf: Buffer): string {
  return createHash('sha256').update(buf).digest('hex');
}

/** Parses `sha256sum` output: `<hex>  <relative path>` per line. */
export function readSums(binDir: string): Map<string, string> {
  const sums = new Map<string, string>();
  let text: string;
  try {
    text = fs.readFileSync(path.join(binDir, 'SHA256SUMS'), 'utf8');
  } catch {
    return sums;
  }
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line.trim());
    if (m) sums.set(m[2], m[1]);
  }
  return sums;
}

/** Mount options of the file system holding `dir`, from /proc/self/mountinfo; undefined off Linux. */
export function mountOptions(dir: string): string[] | undefined {
  let info: string;
  let real: string;
  try {
    info = fs.readFileSync('/proc/self/mountinfo', 'utf8');
    real = fs.realpathSync(dir);
  } catch {
    return undefined;
  }
  let best: { point: string; opts: string[] } | undefined;
  for (const line of info.split('\n')) {
    const fields = line.split(' ');
    if (fields.length < 6) continue;
    const point = fields[4].replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    const inside = real === point || real.startsWith(point.endsWith('/') ? point : `${point}/`);
    if (inside && (best === undefined || point.length >= best.point.length))
      best = { point, opts: fields[5].split(',') };
  }
  return best?.opts;
}

function describeHost(platform: string, arch: string, libc: Libc): string {
  return `${platform}-${arch}${libc ? ` (${libc})` : ''}`;
}

/** Checks the file's header against what this process can load, before dlopen gets a chance to mislead. */
function checkHeader(bytes: Buffer, file: string, tried: string[]): void {
  const info = inspectBinary(bytes);
  const hostLibc = detectLibc();
  const want = expectedFormat(process.platform);
  if (info.format !== want) {
    throw new UnsatisfiedLinkError(
      'WRONG_ARCH',
      `Cannot load the native sketch library ${file}: it is a ${info.format === 'unknown' ? 'file of unknown format' : `${info.format.toUpperCase()} binary`}, ` +
        `this ${describeHost(process.platform, process.arch, hostLibc)} process needs ${want.toUpperCase()} (wrong platform).`,
      tried,
    );
  }
  if (!info.arches.includes(process.arch)) {
    throw new UnsatisfiedLinkError(
      'WRONG_ARCH',
      `Cannot load the native sketch library ${file}: it is built for ${info.arches.join('/') || 'an unknown CPU'}, ` +
        `this process runs on ${process.arch} (wrong architecture).`,
      tried,
    );
  }
  if (info.format === 'elf' && info.libc !== null && hostLibc !== null && info.libc !== hostLibc) {
    throw new UnsatisfiedLinkError(
      'WRONG_LIBC',
      `Cannot load the native sketch library ${file}: it links against ${info.libc}, this host's C library is ` +
        `${hostLibc} (wrong libc; the ${hostLibc === 'musl' ? 'linux-*-musl' : 'linux-* (glibc)'} binary is the one to use).`,
      tried,
    );
  }
}

function requireKoffi(tried: string[]): typeof Koffi {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('koffi') as typeof Koffi;
  } catch (err) {
    throw classifyLoadError(err, undefined, 'koffi', tried);
  }
}

function classifyLoadError(err: unknown, dir: string | undefined, file: string, tried: string[]): UnsatisfiedLinkError {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  if (
    code === 'ERR_DLOPEN_DISABLED' ||
    message.includes('ERR_DLOPEN_DISABLED') ||
    /loading addons is disabled/i.test(message)
  ) {
    return new UnsatisfiedLinkError(
      'ADDONS_DISABLED',
      `Cannot load the native sketch library ${file}: native code is not permitted (ERR_DLOPEN_DISABLED). ` +
        `The Node.js permission model is on without --allow-addons; start node with --allow-addons ` +
        `(the analogue of Java's --enable-native-access).`,
      tried,
      err,
    );
  }
  const opts = dir === undefined ? undefined : mountOptions(dir);
  if (/failed to map segment/i.test(message) || opts?.includes('noexec')) {
    return new UnsatisfiedLinkError(
      'NOEXEC_TEMP',
      `Cannot load the native sketch library ${file}: the temp directory ${dir ?? ''} lacks execute permission ` +
        `(mounted noexec; dlopen: ${message}). Point TMPDIR at a directory that allows execution, set ` +
        `${NO_EXTRACT_ENV}=1 to load the packaged binary in place, or set ${LIBRARY_PATH_ENV} to a copy on an exec mount.`,
      tried,
      err,
    );
  }
  return new UnsatisfiedLinkError(
    'LOAD_FAILED',
    `Cannot load the native sketch library ${file}: ${message}. Usual causes: the temp directory lacks execute ` +
      `permission (noexec mount), native code is not permitted (permission model without --allow-addons), ` +
      `or no binary exists for this platform.`,
    tried,
    err,
  );
}

function removeQuietly(dir: string): void {
  try {
    fs.rmSync(dir, { recursive: true, force: true });
  } catch {
    /* best effort: a leftover private temp dir is harmless */
  }
}

/**
 * Loads the native library, per SPEC 5: logs the platform, copies the binary into a fresh private temp
 * directory, verifies its SHA-256, loads it with koffi and checks its ABI version. Not cached; see
 * {@link nativeLibrary} for the process-wide instance.
 *
 * @throws UnsatisfiedLinkError naming the detected cause.
 */
export function loadNativeLibrary(options: LoaderOptions = {}): NativeLibrary {
  const platform = options.platform ?? process.platform;
  const arch = options.arch ?? process.arch;
  const libc = options.libc !== undefined ? options.libc : detectLibc(platform);
  const target = platformTarget(platform, arch, libc);
  const tried: string[] = [];
  safeLog('info', `loading native library for OS: ${target.os}, Arch: ${target.arch}`);

  const libraryPath = options.libraryPath ?? (process.env[LIBRARY_PATH_ENV] || undefined);
  const binDir = options.binDir ?? DEFAULT_BIN_DIR;
  const source =
    libraryPath !== undefined ? path.resolve(libraryPath) : path.join(binDir, target.key, target.libraryFile);
  const file = path.basename(source);
  tried.push(source);

  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(source);
  } catch (err) {
    if (libraryPath !== undefined) {
      throw new UnsatisfiedLinkError(
        'NO_BINARY',
        `Cannot load the native sketch library: ${LIBRARY_PATH_ENV} names ${source}, which cannot be read (${(err as Error).message}).`,
        tried,
        err,
      );
    }
    let shipped: string[] = [];
    try {
      shipped = fs
        .readdirSync(binDir)
        .filter((d) => fs.statSync(path.join(binDir, d)).isDirectory())
        .sort();
    } catch {
      /* no native-bin at all: say so below */
    }
    throw new UnsatisfiedLinkError(
      'NO_BINARY',
      `Cannot load the native sketch library: no binary for this platform (${target.key}); ` +
        (shipped.length > 0 ? `the package ships ${shipped.join(', ')}. ` : `no native-bin directory at ${binDir}. `) +
        `Build one with native/build.sh and set ${LIBRARY_PATH_ENV} to it.`,
      tried,
      err,
    );
  }

  // The packaged binary must match its recorded sum; a user-named library is trusted as given.
  const actual = sha256(bytes);
  let expected: string | undefined;
  if (libraryPath === undefined) {
    expected = readSums(binDir).get(`${target.key}/${target.libraryFile}`);
    if (expected !== actual) {
      throw new UnsatisfiedLinkError(
        'CHECKSUM_MISMATCH',
        `Cannot load the native sketch library ${file}: checksum mismatch for ${source} ` +
          `(SHA-256 ${actual}, recorded ${expected ?? 'none'} in ${path.join(binDir, 'SHA256SUMS')}); the package is corrupted or was modified. Reinstall it.`,
        tried,
      );
    }
  }
  checkHeader(bytes, file, tried);
  const koffi = requireKoffi(tried);

  const inPlace = libraryPath !== undefined || (options.inPlace ?? process.env[NO_EXTRACT_ENV] === '1');
  let loadPath = source;
  let tempDir: string | undefined;
  if (!inPlace) {
    const base = options.tempDir ?? os.tmpdir();
    try {
      // mkdtemp creates the directory 0700 with a random name; 'wx' refuses a file planted in it meanwhile
      tempDir = fs.mkdtempSync(path.join(base, 'diag-sketch-'));
      fs.chmodSync(tempDir, 0o700);
      loadPath = path.join(tempDir, target.libraryFile);
      tried.push(loadPath);
      const fd = fs.openSync(loadPath, 'wx', 0o700);
      try {
        fs.writeSync(fd, bytes);
      } finally {
        fs.closeSync(fd);
      }
    } catch (err) {
      if (tempDir !== undefined) removeQuietly(tempDir);
      throw new UnsatisfiedLinkError(
        'TEMP_NOT_WRITABLE',
        `Cannot extract the native sketch library ${file} into the temp directory ${base}: ${(err as Error).message}. ` +
          `Point TMPDIR at a writable directory, or set ${NO_EXTRACT_ENV}=1 to load the packaged binary in place.`,
        tried,
        err,
      );
    }
    // What dlopen maps is what is on disk now, not what we wrote: verify the copy itself.
    const copied = sha256(fs.readFileSync(loadPath));
    if (copied !== actual) {
      removeQuietly(tempDir);
      throw new UnsatisfiedLinkError(
        'CHECKSUM_MISMATCH',
        `Cannot load the native sketch library ${file}: checksum mismatch for the extracted copy ${loadPath} ` +
          `(SHA-256 ${copied}, expected ${actual}); the temp directory was tampered with.`,
        tried,
      );
    }
  }

  let handle: Koffi.LibraryHandle;
  try {
    handle = koffi.load(loadPath);
  } catch (err) {
    const error = classifyLoadError(err, tempDir ?? path.dirname(loadPath), file, tried);
    if (tempDir !== undefined) removeQuietly(tempDir);
    throw error;
  }

  let bindings: NativeBindings;
  let abiVersion: number;
  try {
    bindings = bind(koffi, handle);
    abiVersion = bindings.abiVersion();
  } catch (err) {
    if (tempDir !== undefined) removeQuietly(tempDir);
    throw new UnsatisfiedLinkError(
      'ABI_MISMATCH',
      `Cannot use the native sketch library ${file}: a required symbol is missing (${(err as Error).message}).`,
      tried,
      err,
    );
  }
  if (abiVersion !== EXPECTED_ABI_VERSION) {
    if (tempDir !== undefined) removeQuietly(tempDir);
    throw new UnsatisfiedLinkError(
      'ABI_MISMATCH',
      `Cannot use the native sketch library ${file}: ABI version ${abiVersion}, this package needs ${EXPECTED_ABI_VERSION}.`,
      tried,
    );
  }

  if (tempDir !== undefined) {
    safeLog('info', `Successfully extracted and loaded ${target.libraryFile} from ${loadPath}`);
    if (!options.keepExtracted) {
      // POSIX keeps the mapping after unlink; Windows locks a loaded DLL, so try again at exit.
      if (process.platform === 'win32') {
        const dir = tempDir;
        process.once('exit', () => removeQuietly(dir));
      } else {
        removeQuietly(tempDir);
      }
    }
  } else {
    safeLog('info', `Successfully loaded ${file} in place from ${loadPath}`);
  }
  return {
    bindings,
    target,
    loadedFrom: loadPath,
    extracted: tempDir !== undefined,
    abiVersion,
    sha256: actual,
    handle,
  };
}

let shared: { lib?: NativeLibrary; error?: unknown } | undefined;

/**
 * The process-wide native library, loaded on first use. A failure is remembered and rethrown, so a broken
 * install logs and extracts once rather than on every sketch creation.
 */
export function nativeLibrary(): NativeLibrary {
  if (shared === undefined) {
    try {
      shared = { lib: loadNativeLibrary() };
    } catch (error) {
      shared = { error };
    }
  }
  if (shared.lib !== undefined) return shared.lib;
  throw shared.error;
}

/** Forgets the process-wide library (or its failure), so the next use loads again. For tests and hosts. */
export function resetNativeLibrary(): void {
  shared = undefined;
}
