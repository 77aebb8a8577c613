import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { setLogger } from '../../../src/shared/logger';
import { inspectBinary } from '../../../src/sketch/native/binary-header';
import { EXPECTED_ABI_VERSION } from '../../../src/sketch/native/bindings';
import { UnsatisfiedLinkError } from '../../../src/sketch/native/errors';
import {
  detectLibc,
  loadNativeLibrary,
  LIBRARY_PATH_ENV,
  readSums,
  type LoaderOptions,
} from '../../../src/sketch/native/loader';
import { platformTarget } from '../../../src/sketch/native/platform';
import { captureLogger } from './helpers';
import { tempDir } from '../../support/temp';

const root = path.resolve(__dirname, '..', '..', '..');
const binDir = path.join(root, 'native-bin');
const hostLibc = detectLibc();
const host = platformTarget(process.platform, process.arch, hostLibc);
const OS_NAMES: Record<string, string> = { linux: 'Linux', win32: 'Windows', darwin: 'Mac' };
const REQUIRED = [
  'linux-x64',
  'linux-x64-musl',
  'linux-arm64',
  'linux-arm64-musl',
  'win32-x64',
  'darwin-x64',
  'darwin-arm64',
];
const scratch = tempDir('loader-test');

function sha256(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** Loads with a capturing logger; returns the lines and the result or error. */
function load(options: LoaderOptions): {
  lines: string[];
  error?: UnsatisfiedLinkError;
  lib?: ReturnType<typeof loadNativeLibrary>;
} {
  const cap = captureLogger();
  const previous = setLogger(cap.logger);
  try {
    return { lines: cap.lines, lib: loadNativeLibrary(options) };
  } catch (err) {
    if (!(err instanceof UnsatisfiedLinkError)) throw err;
    return { lines: cap.lines, error: err };
  } finally {
    setLogger(previous);
  }
}

/** A copy of native-bin/ to damage. */
function binCopy(name: string): string {
  const dir = path.join(scratch, name);
  fs.cpSync(binDir, dir, { recursive: true });
  return dir;
}

function rewriteSums(dir: string): void {
  const lines = [...readSums(dir).keys()].sort().map((rel) => `${sha256(path.join(dir, rel))}  ${rel}`);
  fs.writeFileSync(path.join(dir, 'SHA256SUMS'), `${lines.join('\n')}\n`);
}

describe('platformTarget', () => {
  it.each([
    ['linux', 'x64', 'glibc', 'Linux', 'linux-x64', 'libdiagcms.so'],
    ['linux', 'x64', 'musl', 'Linux', 'linux-x64-musl', 'libdiagcms.so'],
    ['linux', 'arm64', 'glibc', 'Linux', 'linux-arm64', 'libdiagcms.so'],
    ['linux', 'arm64', 'musl', 'Linux', 'linux-arm64-musl', 'libdiagcms.so'],
    ['win32', 'x64', null, 'Windows', 'win32-x64', 'diagcms.dll'],
    ['darwin', 'x64', null, 'Mac', 'darwin-x64', 'libdiagcms.dylib'],
    ['darwin', 'arm64', 'musl', 'Mac', 'darwin-arm64', 'libdiagcms.dylib'],
    ['freebsd', 'x64', null, 'freebsd', 'freebsd-x64', 'libdiagcms.so'],
  ] as const)('%s %s %s → OS %s, %s/%s', (platform, arch, libc, osName, key, file) => {
    const t = platformTarget(platform, arch, libc);
    expect([t.os, t.key, t.libraryFile]).toEqual([osName, key, file]);
  });
});

describe('committed binaries', () => {
  const sums = readSums(binDir);

  it('exist for every required platform and match their recorded SHA-256 sums', () => {
    for (const key of REQUIRED) {
      const t = platformTarget(key.split('-')[0], key.split('-')[1], key.endsWith('-musl') ? 'musl' : 'glibc');
      const rel = `${key}/${t.libraryFile}`;
      expect(sums.get(rel)).toMatch(/^[0-9a-f]{64}$/);
      expect(sha256(path.join(binDir, rel))).toBe(sums.get(rel));
    }
    expect(sums.size).toBe(REQUIRED.length);
  });

  it('carry the format, CPU and libc their directory names (read from the headers)', () => {
    for (const rel of sums.keys()) {
      const [key] = rel.split('/');
      const [platform, arch, musl] = key.split('-');
      const info = inspectBinary(fs.readFileSync(path.join(binDir, rel)));
      expect({ rel, format: info.format, arches: info.arches }).toEqual({
        rel,
        format: platform === 'win32' ? 'pe' : platform === 'darwin' ? 'macho' : 'elf',
        arches: [arch],
      });
      if (platform === 'linux') expect({ rel, libc: info.libc }).toEqual({ rel, libc: musl ? 'musl' : 'glibc' });
    }
  });

  it('the host binary reports the ABI version the C source and the bindings declare', () => {
    const header = fs.readFileSync(path.join(root, 'native', 'cms.h'), 'utf8');
    const m = /#define CMS_ABI_VERSION (\d+)/.exec(header);
    expect(m).not.toBeNull();
    const { lib } = load({ inPlace: true });
    expect(lib).toBeDefined();
    expect(lib!.bindings.abiVersion()).toBe(Number(m![1]));
    expect(EXPECTED_ABI_VERSION).toBe(Number(m![1]));
  });
});

describe('loadNativeLibrary', () => {
  it('logs the two INFO lines exactly and extracts into a fresh private temp dir (0700) after verifying the sum', () => {
    const { lines, lib, error } = load({ keepExtracted: true });
    expect(error).toBeUndefined();
    expect(lines[0]).toBe(`INFO loading native library for OS: ${OS_NAMES[process.platform]}, Arch: ${process.arch}`);
    const m = /^INFO Successfully extracted and loaded (\S+) from (.+)$/.exec(lines[1]);
    expect(m).not.toBeNull();
    expect(m![1]).toBe(host.libraryFile);
    const tempPath = m![2];
    expect(tempPath).toBe(lib!.loadedFrom);
    expect(path.dirname(path.dirname(tempPath))).toBe(os.tmpdir());
    expect(path.basename(path.dirname(tempPath))).toMatch(/^diag-sketch-[A-Za-z0-9]{6}$/);
    expect(path.basename(tempPath)).toBe(host.libraryFile);
    if (process.platform !== 'win32') expect(fs.statSync(path.dirname(tempPath)).mode & 0o777).toBe(0o700);
    expect(sha256(tempPath)).toBe(readSums(binDir).get(`${host.key}/${host.libraryFile}`));
    expect(lines).toHaveLength(2);
    fs.rmSync(path.dirname(tempPath), { recursive: true, force: true });
  });

  it('removes the extracted copy after loading by default (POSIX keeps the mapping)', () => {
    const { lib } = load({});
    expect(lib!.extracted).toBe(true);
    if (process.platform !== 'win32') expect(fs.existsSync(path.dirname(lib!.loadedFrom))).toBe(false);
    expect(lib!.bindings.abiVersion()).toBe(EXPECTED_ABI_VERSION);
  });

  it('loads in place without extraction when asked, still checking the sum', () => {
    const { lines, lib } = load({ inPlace: true });
    expect(lib!.extracted).toBe(false);
    expect(lib!.loadedFrom).toBe(path.join(binDir, host.key, host.libraryFile));
    expect(lines[1]).toBe(`INFO Successfully loaded ${host.libraryFile} in place from ${lib!.loadedFrom}`);
  });

  it(`loads the file named by ${LIBRARY_PATH_ENV} in place`, () => {
    const own = path.join(scratch, 'own', 'libcustom.so');
    fs.mkdirSync(path.dirname(own), { recursive: true });
    fs.copyFileSync(path.join(binDir, host.key, host.libraryFile), own);
    process.env[LIBRARY_PATH_ENV] = own;
    try {
      const { lines, lib } = load({});
      expect(lib!.loadedFrom).toBe(own);
      expect(lines[1]).toBe(`INFO Successfully loaded libcustom.so in place from ${own}`);
    } finally {
      delete process.env[LIBRARY_PATH_ENV];
    }
  });

  it('refuses a corrupted packaged binary: checksum mismatch, before any dlopen', () => {
    const dir = binCopy('corrupt');
    const file = path.join(dir, host.key, host.libraryFile);
    const bytes = fs.readFileSync(file);
    bytes[bytes.length >> 1] ^= 0xff;
    fs.writeFileSync(file, bytes);
    const { error, lines } = load({ binDir: dir });
    expect(error?.reason).toBe('CHECKSUM_MISMATCH');
    expect(error?.code).toBe('ERR_SKETCH_NATIVE_CHECKSUM');
    expect(error?.message).toMatch(/checksum mismatch/);
    expect(error?.pathsTried).toEqual([file]);
    expect(lines).toEqual([`INFO loading native library for OS: ${host.os}, Arch: ${process.arch}`]);
  });

  it('names the wrong architecture read from the header (dlopen would say "invalid ELF header" or worse)', () => {
    const foreign = process.arch === 'arm64' ? 'x64' : 'arm64';
    const dir = binCopy('wrong-arch');
    const musl = hostLibc === 'musl' ? '-musl' : '';
    fs.copyFileSync(
      path.join(dir, `${process.platform}-${foreign}${musl}`, host.libraryFile),
      path.join(dir, host.key, host.libraryFile),
    );
    rewriteSums(dir);
    const { error } = load({ binDir: dir });
    expect(error?.reason).toBe('WRONG_ARCH');
    expect(error?.code).toBe('ERR_SKETCH_NATIVE_WRONG_ARCH');
    expect(error?.message).toContain(`built for ${foreign}, this process runs on ${process.arch} (wrong architecture)`);
  });

  (process.platform === 'win32' ? it.skip : it)('names a binary of another OS format as the wrong platform', () => {
    process.env[LIBRARY_PATH_ENV] = path.join(binDir, 'win32-x64', 'diagcms.dll');
    try {
      const { error } = load({});
      expect(error?.reason).toBe('WRONG_ARCH');
      expect(error?.message).toMatch(/it is a PE binary.*wrong platform/);
    } finally {
      delete process.env[LIBRARY_PATH_ENV];
    }
  });

  (process.platform === 'linux' ? it : it.skip)('names the wrong libc (a musl binary on glibc or the reverse)', () => {
    const other = hostLibc === 'musl' ? 'glibc' : 'musl';
    const { error } = load({ libc: other });
    expect(error?.reason).toBe('WRONG_LIBC');
    expect(error?.code).toBe('ERR_SKETCH_NATIVE_WRONG_LIBC');
    expect(error?.message).toContain(`it links against ${other}, this host's C library is ${hostLibc}`);
  });

  it('says no binary exists for an unsupported platform and lists what is shipped', () => {
    const { error } = load({ arch: 'riscv64' });
    expect(error?.reason).toBe('NO_BINARY');
    expect(error?.code).toBe('ERR_SKETCH_NATIVE_NO_BINARY');
    expect(error?.message).toContain(`no binary for this platform (${process.platform}-riscv64`);
    expect(error?.message).toContain('darwin-arm64, darwin-x64, linux-arm64');
    expect(error?.pathsTried).toEqual([
      path.join(binDir, `${process.platform}-riscv64${hostLibc === 'musl' ? '-musl' : ''}`, host.libraryFile),
    ]);
  });

  it('says no binary exists when the platform directory is missing from the package', () => {
    const dir = binCopy('missing');
    fs.rmSync(path.join(dir, host.key), { recursive: true });
    const { error } = load({ binDir: dir });
    expect(error?.reason).toBe('NO_BINARY');
    expect(error?.message).toContain(`no binary for this platform (${host.key})`);
    expect(error).toBeInstanceOf(UnsatisfiedLinkError);
    expect(error?.name).toBe('UnsatisfiedLinkError');
  });

  it('reports an unwritable temp directory', () => {
    const { error } = load({ tempDir: path.join(scratch, 'does', 'not', 'exist') });
    expect(error?.reason).toBe('TEMP_NOT_WRITABLE');
  });
});
