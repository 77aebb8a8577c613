/**
 * Both entry points must type-check in the projects Nest users really have: the classic Nest starter
 * (`"module": "commonjs"` and no `moduleResolution`, i.e. node10, which ignores `exports`), node16/nodenext
 * from CommonJS and from ESM, and bundler. Each consumer compiles against the packed tarball, extracted as npm
 * would install it, with `experimentalDecorators` as Nest uses. The same tarball goes through
 * @arethetypeswrong/cli, the tool made to find what a resolution mode gets wrong.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../../support/temp';

const root = path.resolve(__dirname, '..', '..', '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const tsc = require.resolve('typescript/bin/tsc');

/** What a Nest user writes: the instrumentation in telemetry.ts, a decorated controller method. */
const CONSUMER = `
import { DiagInstrumentation, type DiagInstrumentationConfig, type LedgerAnswer, type Verdict } from 'diag-instrumentation';
import { SketchLimit, SketchThresholdError, sketchRegistry } from 'diag-instrumentation/sketch';

const config: DiagInstrumentationConfig = { ghostTracking: { enabled: true } };
export const instrumentation = new DiagInstrumentation(config);

export class PaymentsController {
  @SketchLimit({ windowMs: 60_000, requests: 100, key: (req: { ip?: string }) => req.ip })
  pay(req: { ip?: string }): string {
    return req.ip ?? '';
  }
}

export const ids: string[] = sketchRegistry().list().map((s) => s.id);

/** A CI script reading \`diag-instrumentation ledger --format json\`. */
export function neverTouched(answer: LedgerAnswer): string[] {
  const stale: boolean = answer.provenance.silent || answer.provenance.reset;
  const dead: Verdict = 'never-touched';
  return stale ? [] : answer.beans.filter((b) => b.verdict === dead && b.ghostCandidate).map((b) => \`\${b.module ?? ''}/\${b.name}\`);
}
export const isThreshold = (e: unknown): boolean => e instanceof SketchThresholdError;
`;

interface Consumer {
  readonly name: string;
  readonly type: 'commonjs' | 'module';
  readonly file: string;
  readonly compilerOptions: Record<string, unknown>;
}

const NEST_STARTER = {
  target: 'ES2021',
  strict: true,
  declaration: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  skipLibCheck: false,
  types: ['node'],
  noEmit: true,
};

const CONSUMERS: readonly Consumer[] = [
  // The classic Nest starter: no moduleResolution, so node10.
  { name: 'node10', type: 'commonjs', file: 'index.ts', compilerOptions: { ...NEST_STARTER, module: 'commonjs' } },
  {
    name: 'node16-cjs',
    type: 'commonjs',
    file: 'index.ts',
    compilerOptions: { ...NEST_STARTER, module: 'node16', moduleResolution: 'node16' },
  },
  {
    name: 'nodenext-esm',
    type: 'module',
    file: 'index.ts',
    compilerOptions: { ...NEST_STARTER, module: 'nodenext', moduleResolution: 'nodenext' },
  },
  {
    name: 'bundler',
    type: 'module',
    file: 'index.ts',
    compilerOptions: { ...NEST_STARTER, module: 'esnext', moduleResolution: 'bundler' },
  },
];

let tarball = '';
let installed = '';

beforeAll(() => {
  const packDir = tempDir('types-pack');
  // --ignore-scripts: the global setup has just built dist/ from the same sources (see packaging.test.ts).
  const out = execFileSync(npm, ['pack', '--silent', '--ignore-scripts', '--pack-destination', packDir], {
    cwd: root,
    encoding: 'utf8',
  });
  tarball = path.join(packDir, out.trim().split('\n').pop()!);
  // Laid out as npm installs a tarball; its dependencies, peers and @types/node are this checkout's copies.
  const modules = path.join(packDir, 'node_modules');
  installed = path.join(modules, 'diag-instrumentation');
  fs.mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8')) as Record<
    string,
    Record<string, string>
  >;
  const needed = [
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
    '@types/node',
  ];
  for (const name of needed) {
    const link = path.join(modules, name);
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(path.join(root, 'node_modules', name), link, 'dir');
  }
}, 120_000);

describe.each(CONSUMERS)('a $name consumer', (consumer) => {
  it('type-checks both entry points with experimentalDecorators', () => {
    const dir = path.join(path.dirname(path.dirname(installed)), consumer.name);
    fs.mkdirSync(dir);
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: `consumer-${consumer.name}`, type: consumer.type }),
    );
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: consumer.compilerOptions, files: [consumer.file] }),
    );
    fs.writeFileSync(path.join(dir, consumer.file), CONSUMER);
    const res = spawnSync(process.execPath, [tsc, '-p', dir, '--traceResolution'], { cwd: dir, encoding: 'utf8' });
    const diagnostics = res.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
    expect(diagnostics).toEqual([]);
    expect(res.status).toBe(0);
    // It resolved the shipped declarations, not something else that happened to be reachable.
    expect(res.stdout).toMatch(
      /'diag-instrumentation\/sketch' was successfully resolved to '[^']*diag-instrumentation\/dist\/sketch\/index\.d\.ts'/,
    );
  }, 60_000);
});

it('has no problem @arethetypeswrong/cli finds, in any resolution mode', () => {
  const attw = path.join(path.dirname(require.resolve('@arethetypeswrong/cli/package.json')), 'dist', 'index.js');
  const res = spawnSync(process.execPath, [attw, tarball, '--format', 'json'], { cwd: root, encoding: 'utf8' });
  const report = JSON.parse(res.stdout) as { analysis: { problems: unknown[]; entrypoints: Record<string, unknown> } };
  expect(Object.keys(report.analysis.entrypoints).sort()).toEqual(['.', './package.json', './sketch']);
  expect(report.analysis.problems).toEqual([]);
  expect(res.status).toBe(0);
}, 120_000);
