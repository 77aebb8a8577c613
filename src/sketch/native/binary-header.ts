/**
 * Reads just enough of an ELF, Mach-O or PE header to say which CPU (and, for ELF, which C library) a
 * shared library was built for. dlopen's own message for a foreign binary ("invalid ELF header", "cannot
 * open shared object file" for a missing musl loader) points away from the real cause, so the loader
 * checks this before loading.
 */

/** The executable format a header shows: Linux's ELF, macOS's Mach-O, Windows's PE. */
export type BinaryFormat = 'elf' | 'macho' | 'pe' | 'unknown';

/** What {@link inspectBinary} read from a shared library's header. */
export interface BinaryInfo {
  readonly format: BinaryFormat;
  /** Node-style arch name (`x64`, `arm64`, `ia32`, `arm`, ...), or `unknown:<machine>` for others. */
  readonly arches: readonly string[];
  /** For ELF: the C library named in DT_NEEDED; null when none is linked or not ELF. */
  readonly libc: 'glibc' | 'musl' | null;
}

const ELF_MACHINES: Readonly<Record<number, string>> = {
  0x03: 'ia32',
  0x28: 'arm',
  0x3e: 'x64',
  0xb7: 'arm64',
  0xf3: 'riscv64',
  0x15: 'ppc64',
  0x16: 's390x',
};
const MACHO_CPUS: Readonly<Record<number, string>> = { 0x01000007: 'x64', 0x0100000c: 'arm64', 7: 'ia32', 12: 'arm' };
const PE_MACHINES: Readonly<Record<number, string>> = { 0x8664: 'x64', 0xaa64: 'arm64', 0x14c: 'ia32', 0x1c4: 'arm' };

function name(table: Readonly<Record<number, string>>, id: number): string {
  return table[id] ?? `unknown:0x${id.toString(16)}`;
}

/** Never throws: a truncated or odd file yields `format: 'unknown'` or partial information. */
export function inspectBinary(buf: Buffer): BinaryInfo {
  try {
    if (buf.length >= 20 && buf.readUInt32BE(0) === 0x7f454c46) return inspectElf(buf);
    if (buf.length >= 8) {
      const le = buf.readUInt32LE(0);
      if (le === 0xfeedfacf || le === 0xfeedface)
        return { format: 'macho', arches: [name(MACHO_CPUS, buf.readInt32LE(4))], libc: null };
      if (buf.readUInt32BE(0) === 0xcafebabe) {
        const n = buf.readUInt32BE(4);
        const arches: string[] = [];
        for (let i = 0; i < n && i < 16 && 8 + i * 20 + 4 <= buf.length; i++)
          arches.push(name(MACHO_CPUS, buf.readInt32BE(8 + i * 20)));
        return { format: 'macho', arches, libc: null };
      }
    }
    if (buf.length >= 0x40 && buf.readUInt16LE(0) === 0x5a4d) {
      const pe = buf.readUInt32LE(0x3c);
      if (pe + 6 <= buf.length && buf.readUInt32LE(pe) === 0x00004550) {
        return { format: 'pe', arches: [name(PE_MACHINES, buf.readUInt16LE(pe + 4))], libc: null };
      }
    }
  } catch {
    /* fall through: a malformed header is reported as unknown */
  }
  return { format: 'unknown', arches: [], libc: null };
}

function inspectElf(buf: Buffer): BinaryInfo {
  const is64 = buf[4] === 2;
  const le = buf[5] !== 2;
  const u16 = (o: number): number => (le ? buf.readUInt16LE(o) : buf.readUInt16BE(o));
  const u32 = (o: number): number => (le ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  const word = (o: number): number => (is64 ? Number(le ? buf.readBigUInt64LE(o) : buf.readBigUInt64BE(o)) : u32(o));
  const arches = [name(ELF_MACHINES, u16(18))];
  let libc: BinaryInfo['libc'] = null;
  try {
    libc = elfLibc(buf, is64, u16, u32, word);
  } catch {
    /* a header we cannot walk still tells the arch */
  }
  return { format: 'elf', arches, libc };
}

function elfLibc(
  buf: Buffer,
  is64: boolean,
  u16: (o: number) => number,
  u32: (o: number) => number,
  word: (o: number) => number,
): BinaryInfo['libc'] {
  const phoff = word(is64 ? 32 : 28);
  const phentsize = u16(is64 ? 54 : 42);
  const phnum = u16(is64 ? 56 : 44);
  const loads: Array<{ vaddr: number; offset: number; filesz: number }> = [];
  let dyn: { offset: number; size: number } | undefined;
  for (let i = 0; i < phnum; i++) {
    const p = phoff + i * phentsize;
    const type = u32(p);
    const offset = is64 ? word(p + 8) : u32(p + 4);
    const vaddr = is64 ? word(p + 16) : u32(p + 8);
    const filesz = is64 ? word(p + 32) : u32(p + 16);
    if (type === 1) loads.push({ vaddr, offset, filesz });
    if (type === 2) dyn = { offset, size: filesz };
    // an executable's interpreter names the libc outright
    if (type === 3) {
      const interp = buf.toString('latin1', offset, offset + filesz);
      if (interp.includes('ld-musl')) return 'musl';
      if (interp.includes('ld-linux')) return 'glibc';
    }
  }
  if (dyn === undefined) return null;
  const entry = is64 ? 16 : 8;
  const needed: number[] = [];
  let strtab = -1;
  for (let o = dyn.offset; o + entry <= dyn.offset + dyn.size; o += entry) {
    const tag = is64 ? word(o) : u32(o);
    const val = is64 ? word(o + 8) : u32(o + 4);
    if (tag === 0) break;
    if (tag === 1) needed.push(val);
    if (tag === 5) strtab = val;
  }
  const seg = loads.find((l) => strtab >= l.vaddr && strtab < l.vaddr + l.filesz);
  if (strtab < 0 || seg === undefined) return null;
  const base = strtab - seg.vaddr + seg.offset;
  for (const off of needed) {
    const start = base + off;
    const end = buf.indexOf(0, start);
    const lib = buf.toString('latin1', start, end < 0 ? buf.length : end);
    if (lib === 'libc.so.6' || lib.startsWith('ld-linux')) return 'glibc';
    if (lib === 'libc.so' || lib.startsWith('ld-musl') || lib.startsWith('libc.musl')) return 'musl';
  }
  return null;
}

/** The binary format a platform loads. */
export function expectedFormat(platform: string): BinaryFormat {
  return platform === 'win32' ? 'pe' : platform === 'darwin' ? 'macho' : 'elf';
}
