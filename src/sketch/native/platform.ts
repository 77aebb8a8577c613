/** C library (glibc or musl) of a Linux host; null elsewhere or when unknown. */
export type Libc = 'glibc' | 'musl' | null;

/** Where the loader looks for the native library of one platform. */
export interface PlatformTarget {
  /** Operating system as the log line names it: `Linux`, `Windows`, `Mac`, or Node's own name for others. */
  readonly os: string;
  /** Node's `process.platform`. */
  readonly platform: string;
  /** Node's `process.arch`. */
  readonly arch: string;
  readonly libc: Libc;
  /** Directory under `native-bin/`: `<platform>-<arch>[-musl]`. */
  readonly key: string;
  /** File name with the platform's native-library extension. */
  readonly libraryFile: string;
}

const OS_NAMES: Readonly<Record<string, string>> = { linux: 'Linux', win32: 'Windows', darwin: 'Mac' };

/**
 * Pure mapping from (platform, arch, libc) to the binary the package ships for it. Kept free of I/O so the
 * whole matrix can be tested on one machine.
 */
export function platformTarget(platform: string, arch: string, libc: Libc = null): PlatformTarget {
  const musl = platform === 'linux' && libc === 'musl';
  const libraryFile =
    platform === 'win32' ? 'diagcms.dll' : platform === 'darwin' ? 'libdiagcms.dylib' : 'libdiagcms.so';
  return {
    os: OS_NAMES[platform] ?? platform,
    platform,
    arch,
    libc: platform === 'linux' ? libc : null,
    key: `${platform}-${arch}${musl ? '-musl' : ''}`,
    libraryFile,
  };
}
