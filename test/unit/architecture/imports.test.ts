/**
 * The import rules ARCHITECTURE.md states, checked on every import of src/ (static, dynamic and require): a new
 * arrow that crosses one fails here with the rule's name, the file and the import.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const SRC = path.resolve(__dirname, '..', '..', '..', 'src');

interface Import {
  /** The importing file, relative to src/ (`ghost/detector.ts`). */
  readonly from: string;
  /** The imported module: a path relative to src/ without extension, or a package / builtin name. */
  readonly to: string;
  readonly typeOnly: boolean;
  /** A `require(...)` or `import(...)`: loaded when that line runs, not with the importing file. */
  readonly lazy: boolean;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const IMPORT =
  /(?:^|[^.\w])(import\s+type\s[^'"]*?from\s*|import\s[^'"]*?from\s*|export\s[^'"]*?from\s*|import\s*\(\s*|require\s*\(\s*|import\s+)(['"])([^'"]+)\2/gm;

function importsOf(file: string): Import[] {
  const from = path.relative(SRC, file).split(path.sep).join('/');
  const text = fs.readFileSync(file, 'utf8');
  const found: Import[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[3]!;
    const typeOnly = /^import\s+type\s/.test(m[1]!) || /^export\s+type\s/.test(m[1]!);
    const to = spec.startsWith('.')
      ? path
          .relative(SRC, path.resolve(path.dirname(file), spec))
          .split(path.sep)
          .join('/')
      : spec;
    const lazy = /^(require|import)\s*\(/.test(m[1]!);
    found.push({ from, to, typeOnly, lazy });
  }
  return found;
}

const ALL = sourceFiles(SRC).flatMap(importsOf);
/** Relative imports are resolved against src/, so the package's own modules start with a folder of src/. */
const internal = (i: Import) =>
  /^(actuator|adapters|config|ghost|index|instrumentation|patching|shared|sketch|telemetry)(\/|$)/.test(i.to);
const under = (p: string, folder: string) => p === folder || p.startsWith(`${folder}/`);

interface Rule {
  /** As ARCHITECTURE.md names it. */
  readonly name: string;
  /** The files the rule is about. */
  readonly applies: (file: string) => boolean;
  /** Whether `i` breaks it. */
  readonly breaks: (i: Import) => boolean;
}

const RULES: Rule[] = [
  {
    name: 'shared imports nothing else of the package',
    applies: (f) => under(f, 'shared'),
    breaks: (i) => internal(i) && !under(i.to, 'shared'),
  },
  {
    name: 'patching imports only shared',
    applies: (f) => under(f, 'patching'),
    breaks: (i) => internal(i) && !under(i.to, 'patching') && !under(i.to, 'shared'),
  },
  {
    name: "config imports only shared, the settings tables the products declare and the adapters registry (for the containers' names)",
    applies: (f) => under(f, 'config'),
    breaks: (i) =>
      internal(i) &&
      !under(i.to, 'config') &&
      !under(i.to, 'shared') &&
      !/^[a-z]+\/settings$/.test(i.to) &&
      i.to !== 'adapters/registry',
  },
  {
    name: 'the ghost detector imports no adapter, no output, no sketch',
    applies: (f) => under(f, 'ghost'),
    breaks: (i) => internal(i) && !['ghost', 'shared', 'patching', 'config'].some((f) => under(i.to, f)),
  },
  {
    name: 'the ghost detector and the sketch core import no framework, no SDK, no node:http',
    applies: (f) => under(f, 'ghost') || (under(f, 'sketch') && !under(f, 'sketch/nestjs')),
    breaks: (i) =>
      /^@nestjs\//.test(i.to) || /^@opentelemetry\/sdk-/.test(i.to) || i.to === 'node:http' || i.to === 'http',
  },
  {
    name: 'the sketch core imports only itself and shared; only its entry point reaches sketch/nestjs',
    applies: (f) => under(f, 'sketch') && !under(f, 'sketch/nestjs') && f !== 'sketch/index.ts',
    breaks: (i) => internal(i) && !((under(i.to, 'sketch') && !under(i.to, 'sketch/nestjs')) || under(i.to, 'shared')),
  },
  {
    name: 'the sketches on NestJS import the sketch core and shared only',
    applies: (f) => under(f, 'sketch/nestjs'),
    breaks: (i) => internal(i) && !under(i.to, 'sketch') && !under(i.to, 'shared'),
  },
  {
    name: 'adapters import the ghost detector, patching and shared, never an output or another adapter',
    applies: (f) => under(f, 'adapters'),
    breaks: (i) => {
      if (!internal(i)) return false;
      if (['ghost', 'shared', 'patching'].some((f) => under(i.to, f))) return false;
      if (!under(i.to, 'adapters')) return true;
      // The registry is the one list of containers: it reaches into each adapter folder so that the
      // instrumentation and the settings name none of them, only lazily (types, or a require inside an entry),
      // so that reading the names loads no adapter; an adapter's `packages` module, names and no code, is the
      // exception (the packages that build its definitions when they load). No adapter imports the registry.
      if (i.from === 'adapters/registry.ts') return !(i.typeOnly || i.lazy || /^adapters\/[^/]+\/packages$/.test(i.to));
      if (i.to === 'adapters/registry') return true;
      const own = (p: string) =>
        under(p, 'adapters/lazy/') ? p.split('/').slice(0, 3).join('/') : p.split('/').slice(0, 2).join('/');
      const sharedLazy = /^adapters\/lazy\/[^/]+$/.test(i.to);
      return !(own(i.to) === own(i.from) || (under(i.from, 'adapters/lazy') && sharedLazy));
    },
  },
  {
    name: 'the NestJS adapter never imports @nestjs/* (structural types only)',
    applies: (f) => under(f, 'adapters/nestjs'),
    breaks: (i) => /^@nestjs\//.test(i.to),
  },
  {
    name: 'the actuator and telemetry import no adapter and not the instrumentation',
    applies: (f) => under(f, 'actuator') || under(f, 'telemetry'),
    breaks: (i) => internal(i) && (under(i.to, 'adapters') || under(i.to, 'instrumentation')),
  },
  {
    name: 'only the entry point imports the instrumentation',
    applies: (f) => f !== 'index.ts' && !under(f, 'instrumentation'),
    breaks: (i) => internal(i) && under(i.to, 'instrumentation'),
  },
];

describe('ARCHITECTURE.md import rules', () => {
  it('reads the imports of every source file', () => {
    expect(ALL.length).toBeGreaterThan(200);
    expect(ALL.some((i) => i.from === 'ghost/detector.ts' && i.to === 'ghost/analysis/candidates')).toBe(true);
  });

  it.each(RULES.map((r) => [r.name, r] as const))('%s', (_name, rule) => {
    const broken = ALL.filter((i) => rule.applies(i.from) && rule.breaks(i)).map((i) => `${i.from} → ${i.to}`);
    expect(broken).toEqual([]);
  });

  it('names each rule in ARCHITECTURE.md', () => {
    const doc = fs.readFileSync(path.resolve(SRC, '..', 'ARCHITECTURE.md'), 'utf8');
    for (const rule of RULES) expect(doc).toContain(rule.name);
  });

  it('keeps src/ to ten entries or fewer', () => {
    expect(fs.readdirSync(SRC).length).toBeLessThanOrEqual(10);
  });
});
