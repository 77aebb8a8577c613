/**
 * `diag-instrumentation check` as CI runs it: the compiled bin against reports a real NestJS app wrote.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getJson, launchSpec, startApp, tempDir } from './support/app-process';

const BIN = path.resolve(__dirname, '..', '..', 'dist', 'ghost', 'cli', 'index.js');

function check(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, 'check', ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

let diagReport = '';
let ghostReport = '';
let dir = '';

beforeAll(async () => {
  const app = await startApp('nest11-cjs', { env: { DIAG_GHOST_TRACKING_ENABLED: 'true' } });
  await app.stop('SIGTERM');
  diagReport = path.join(app.reportDir, 'diag-report.json');
  ghostReport = path.join(app.reportDir, 'diag-ghost-report.json');
  dir = tempDir('cli');
});

/** The line of `class LegacyReportService` in the compiled file the reports name (relative to the app's directory). */
function legacyLine(): number {
  const compiled = fs.readFileSync(path.join(launchSpec('nest11-cjs').cwd, 'shop.module.js'), 'utf8').split('\n');
  const at = compiled.findIndex((l) => /\bclass LegacyReportService\b/.test(l));
  if (at < 0) throw new Error('no class LegacyReportService in shop.module.js');
  return at + 1;
}

const candidates = () => JSON.parse(fs.readFileSync(diagReport, 'utf8')).ghostCandidates.beans as string[];

describe('diag-instrumentation check', () => {
  it('fails (1) listing the candidates a baseline that does not exist yet lacks, then passes once it is updated', () => {
    const baseline = path.join(dir, 'nested', 'ghosts.baseline.json');
    const first = check(diagReport, '--baseline', baseline);
    expect(first.code).toBe(1);
    expect(first.stdout).toContain(`${candidates().length} new ghost candidates not in ${baseline}:`);
    expect(first.stdout).toContain(`  LegacyReportService (ShopModule, shop.module.js:${legacyLine()})\n`);

    const update = check(diagReport, '--baseline', baseline, '--update-baseline');
    expect(update.code).toBe(0);
    expect(JSON.parse(fs.readFileSync(baseline, 'utf8'))).toEqual({
      tool: 'diag-instrumentation',
      kind: 'ghost-candidate',
      beans: [...candidates()].sort(),
    });
    const again = check(diagReport, '--baseline', baseline);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^no new ghost candidates/);
  });

  it('fails on a new candidate only: one dropped from the baseline comes back as new', () => {
    const baseline = path.join(dir, 'partial.json');
    const beans = candidates().filter((b) => b !== 'LegacyReportService');
    fs.writeFileSync(baseline, JSON.stringify({ tool: 'diag-instrumentation', kind: 'ghost-candidate', beans }));
    const r = check(diagReport, '--baseline', baseline);
    expect(r.code).toBe(1);
    expect(
      r.stdout
        .split('\n')
        .filter((l) => /^ {2}\S/.test(l))
        .map((l) => l.trim().split(' ')[0]),
    ).toEqual(['LegacyReportService']);
    expect(r.stdout).toContain('1 new ghost candidate not in');
  });

  it('advises a command that works as printed: run, it accepts the findings and the check passes', () => {
    const baseline = path.join(dir, 'advice', 'baseline.json');
    const first = check(diagReport, '--baseline', baseline);
    expect(first.code).toBe(1);
    // complete as printed: `npx` included, the baseline named
    const advice = first.stdout.split('\n').find((l) => l.startsWith('    npx diag-instrumentation check '))!;
    const args = advice.trim().split(' ').slice(3); // what follows `npx diag-instrumentation check`
    expect(args).toEqual([diagReport, '--baseline', baseline, '--update-baseline']);
    // Phase 1 is a heuristic: its advice is its disclaimer's, a confirmation first, never "Remove them"
    expect(first.stdout).toMatch(
      /^Confirm (it|them) with Phase 2 \(diag\.ghost-tracking\.enabled\) before removing anything, or accept (it|them) into the baseline:$/m,
    );
    expect(first.stdout).not.toMatch(/^Remove/m);
    expect(check(...args).code).toBe(0);
    expect(check(diagReport, '--baseline', baseline).code).toBe(0);
    // without a baseline, the advice names the one to create
    const bare = spawnSync(process.execPath, [BIN, 'check', diagReport], { encoding: 'utf8', cwd: dir });
    expect(bare.stdout).toContain(
      `    npx diag-instrumentation check ${diagReport} --baseline diag-baseline.json --update-baseline`,
    );
  });

  it('names the module and file of an untouched bean, from the start-up report beside the ghost report', () => {
    const r = check(ghostReport);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`  LegacyReportService (ShopModule, shop.module.js:${legacyLine()})\n`);
    // Without a baseline it says so first; one run asks for a look, not a removal.
    expect(r.stdout).toMatch(/^no baseline given: \d+ beans? untouched in this run/);
    expect(r.stdout).toMatch(/^Look into (it|them) before removing anything, or accept (it|them) into the baseline:$/m);
    expect(r.stdout).not.toMatch(/^Remove/m);
  });

  it('names the source file the user edits when the compiled file ships a source map', () => {
    const project = tempDir('cli-maps');
    fs.mkdirSync(path.join(project, 'src'));
    fs.mkdirSync(path.join(project, 'dist'));
    fs.writeFileSync(path.join(project, 'src', 'shop.service.ts'), 'export class DeadService {}\n');
    fs.writeFileSync(
      path.join(project, 'dist', 'shop.service.js'),
      'class DeadService {}\n//# sourceMappingURL=shop.service.js.map\n',
    );
    fs.writeFileSync(
      path.join(project, 'dist', 'shop.service.js.map'),
      JSON.stringify({ version: 3, sources: ['../src/shop.service.ts'], mappings: '' }),
    );
    const report = path.join(project, 'diag-report.json');
    fs.writeFileSync(
      report,
      JSON.stringify({
        ghostCandidates: { beans: ['DeadService'] },
        graph: { nodes: [{ name: 'DeadService', module: 'ShopModule', source: 'dist/shop.service.js' }] },
      }),
    );
    const r = spawnSync(process.execPath, [BIN, 'check', report], { encoding: 'utf8', cwd: project });
    expect(r.stdout).toMatch(/^ {2}DeadService \(ShopModule, src\/shop\.service\.ts\)$/m);
  });

  it("gives a registration's compiled line as its source's line through the map, or keeps the compiled file and line", () => {
    const project = tempDir('cli-map-lines');
    fs.mkdirSync(path.join(project, 'src'));
    fs.mkdirSync(path.join(project, 'dist'));
    fs.writeFileSync(
      path.join(project, 'src', 'shop.module.ts'),
      "import { Logger } from '@nestjs/common';\n\n@Module({\n  providers: [\n    Logger,\n  ],\n})\n",
    );
    fs.writeFileSync(
      path.join(project, 'dist', 'shop.module.js'),
      "const common_1 = require('@nestjs/common');\n\n    common_1.Logger,\n//# sourceMappingURL=shop.module.js.map\n",
    );
    // Line 1 from the source's line 1; line 3 from line 5, its one segment at column 4 (the indentation before it).
    fs.writeFileSync(
      path.join(project, 'dist', 'shop.module.js.map'),
      JSON.stringify({ version: 3, sources: ['../src/shop.module.ts'], names: [], mappings: 'AAAA;;IAIA' }),
    );
    const registered = (name: string, line: number, extra: object) => ({
      name,
      module: 'ShopModule',
      registeredIn: { file: 'dist/shop.module.js', line },
      ...extra,
    });
    const report = path.join(project, 'diag-report.json');
    fs.writeFileSync(
      report,
      JSON.stringify({
        ghostCandidates: { beans: ['ShopModule/Logger', 'CACHE'] },
        graph: {
          nodes: [
            registered('ShopModule/Logger', 3, { className: 'Logger', kind: 'class', libraryClass: true }),
            // Its line maps to one that does not name it (another build's map): the compiled file and line stand.
            registered('CACHE', 1, { kind: 'value' }),
          ],
        },
      }),
    );
    const r = spawnSync(process.execPath, [BIN, 'check', report], { encoding: 'utf8', cwd: project });
    expect(r.stdout).toMatch(/^ {2}ShopModule\/Logger \(ShopModule, registered at src\/shop\.module\.ts:5\)/m);
    expect(r.stdout).toMatch(/^ {2}CACHE \(ShopModule, registered at dist\/shop\.module\.js:1\)/m);
    const sarif = spawnSync(process.execPath, [BIN, 'check', report, '--format', 'sarif'], {
      encoding: 'utf8',
      cwd: project,
    });
    const locations = (JSON.parse(sarif.stdout).runs[0].results as any[]).map((x) => x.locations[0].physicalLocation);
    expect(locations).toEqual(
      expect.arrayContaining([
        { artifactLocation: { uri: 'src/shop.module.ts' }, region: { startLine: 5 } },
        { artifactLocation: { uri: 'dist/shop.module.js' }, region: { startLine: 1 } },
      ]),
    );
  });

  it('checks the untouched beans of a ghost report the same way', () => {
    const baseline = path.join(dir, 'untouched.json');
    const r = check(ghostReport, '--baseline', baseline);
    expect(r.code).toBe(1);
    // The gate is on this run, and says so: one run is no verdict.
    expect(r.stdout).toMatch(/new beans untouched in this run/);
    expect(r.stdout).toMatch(
      /a gate on this run only: one run is no verdict, so these beans(, methods and endpoints)? are not known to be dead/,
    );
    const verdicts = JSON.parse(fs.readFileSync(ghostReport, 'utf8')).verdicts as { verdict: string }[];
    expect(verdicts.some((v) => v.verdict === 'never-touched')).toBe(false);
    expect(check(ghostReport, '--baseline', baseline, '--update-baseline').code).toBe(0);
    expect(check(ghostReport, '--baseline', baseline).code).toBe(0);
    // A baseline of the other kind is bad input, not a silent pass.
    const wrong = check(diagReport, '--baseline', baseline);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('lists beans untouched in this run, the report lists ghost candidates');
  });

  it('prints SARIF 2.1.0 with the rule, every finding with its class and file, and which are new', () => {
    const baseline = path.join(dir, 'sarif-baseline.json');
    fs.writeFileSync(
      baseline,
      JSON.stringify({ tool: 'diag-instrumentation', kind: 'ghost-candidate', beans: ['FEATURE_FLAGS'] }),
    );
    const r = check(diagReport, '--baseline', baseline, '--format', 'sarif');
    expect(r.code).toBe(1);
    const sarif = JSON.parse(r.stdout);
    expect(sarif.version).toBe('2.1.0');
    expect(sarif.$schema).toMatch(/sarif-2\.1\.0/);
    const run = sarif.runs[0];
    expect(run.tool.driver).toMatchObject({
      name: 'diag-instrumentation',
      rules: [{ id: 'ghost-candidate', defaultConfiguration: { level: 'warning' } }],
    });
    expect(run.results).toHaveLength(candidates().length);
    const legacy = run.results.find(
      (x: any) => x.partialFingerprints['diagBean/v1'] === 'ShopModule/LegacyReportService',
    );
    expect(legacy).toMatchObject({
      ruleId: 'ghost-candidate',
      level: 'warning',
      baselineState: 'new',
      locations: [
        {
          physicalLocation: { artifactLocation: { uri: 'shop.module.js' } },
          logicalLocations: [{ name: 'LegacyReportService', kind: 'type' }],
        },
      ],
    });
    // at its class's line in the file the report names (relative to the app's directory)
    expect(legacy.locations[0].physicalLocation.region).toEqual({ startLine: legacyLine() });
    expect(run.results.find((x: any) => x.message.text.startsWith('FEATURE_FLAGS')).baselineState).toBe('unchanged');
  });

  it.each([
    ['a missing report', () => path.join(dir, 'nope.json'), /cannot read report .*nope\.json: ENOENT/],
    [
      'a truncated report',
      () => {
        const f = path.join(dir, 'cut.json');
        fs.writeFileSync(f, fs.readFileSync(diagReport, 'utf8').slice(0, 200));
        return f;
      },
      /is not valid JSON \(truncated or corrupt\)/,
    ],
    [
      'an empty report',
      () => {
        const f = path.join(dir, 'empty.json');
        fs.writeFileSync(f, '');
        return f;
      },
      /is not valid JSON \(empty\)/,
    ],
    [
      'a foreign JSON file',
      () => path.resolve(__dirname, '..', '..', 'package.json'),
      /is neither a diag-report\.json .* nor a diag-ghost-report\.json/,
    ],
  ])('exits 2 with a clear message for %s', (_what, file, message) => {
    const r = check(file());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });

  it('says a container left unpatched: a note on stderr and in SARIF, and exit 2 when nothing at all was tracked', () => {
    const report = JSON.parse(fs.readFileSync(ghostReport, 'utf8'));
    const unsupported = [{ package: 'inversify', version: '5.1.1', supported: ['>=6.0.0 <7'] }];
    const note =
      'inversify 5.1.1 is outside the versions diag-instrumentation supports (>=6.0.0 <7): the run left it ' +
      'unpatched, so this report shows none of its beans';
    const partly = path.join(dir, 'partly-unsupported.json');
    fs.writeFileSync(partly, JSON.stringify({ ...report, unsupported }));
    const sarif = check(partly, '--format', 'sarif');
    expect(sarif.stderr).toContain(`diag-instrumentation check: note: ${note}`);
    expect(JSON.parse(sarif.stdout).runs[0].invocations).toEqual([
      { executionSuccessful: true, toolExecutionNotifications: [{ level: 'warning', message: { text: note } }] },
    ]);
    // nothing tracked because of it: no gate to pass, never a green one
    const blind = path.join(dir, 'blind.json');
    fs.writeFileSync(
      blind,
      JSON.stringify({
        ...report,
        trackedCount: 0,
        touchedCount: 0,
        untouchedCount: 0,
        touched: [],
        untouched: [],
        untrackableCount: 0,
        untrackable: {},
        verdicts: [],
        methods: {},
        endpoints: [],
        unsupported,
      }),
    );
    const r = check(blind);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/tracked nothing: every container this run loaded was left unpatched/);
    expect(r.stdout).toBe('');
  });

  it('says "no … in the report" when the report has none, not that a baseline holds them', () => {
    const empty = path.join(dir, 'empty.json');
    const report = JSON.parse(fs.readFileSync(ghostReport, 'utf8'));
    fs.writeFileSync(
      empty,
      JSON.stringify({ ...report, untouched: [], untouchedCount: 0, verdicts: [], methods: {}, endpoints: [] }),
    );
    const r = check(empty);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('no beans untouched in this run in the report\n');
  });

  it('exits 2 with the usage for bad arguments', () => {
    expect(check().code).toBe(2);
    const r = check(diagReport, '--format', 'xml');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--format must be text or sarif/);
    expect(check(diagReport, '--update-baseline').stderr).toMatch(/--update-baseline needs --baseline/);
    expect(check(diagReport, '--bogus').stderr).toMatch(/Unknown option '--bogus'.*\n.*check --help/);
  });

  const bin = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: {} });

  it('prints each command’s own help, with its environment variables and exit codes, on standard output', () => {
    const ledger = bin('ledger', '--help');
    expect(ledger.status).toBe(0);
    expect(ledger.stdout).toMatch(/^usage: npx diag-instrumentation ledger/);
    for (const variable of [
      'DIAG_GHOST_TRACKING_LEDGER_URL',
      'DIAG_GHOST_TRACKING_LEDGER_SERVICE',
      'OTEL_SERVICE_NAME',
      'DIAG_GHOST_TRACKING_LEDGER_MIN_DAYS',
      'DIAG_GHOST_TRACKING_LEDGER_MIN_PROCESS_HOURS',
      'DIAG_GHOST_TRACKING_LEDGER_MIN_TRACKED_SHARE',
    ]) {
      expect(ledger.stdout).toContain(variable);
    }
    expect(ledger.stdout).toMatch(/Exit codes: 0 .*; 1 .*; 2 .*silent/s);
    const check = bin('check', '--help');
    expect(check.status).toBe(0);
    expect(check.stdout).toMatch(/^usage: npx diag-instrumentation check/);
    expect(check.stdout).not.toContain('--min-days');
    const version = bin('--version');
    expect(version.status).toBe(0);
    expect(version.stdout).toBe(
      `${JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8')).version}\n`,
    );
    expect(bin('ledger', '--version').stdout).toBe(version.stdout);
  });

  it('names both variables a service may come from when there is none', () => {
    const r = bin('ledger', '--url', 'redis://127.0.0.1:1');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('DIAG_GHOST_TRACKING_LEDGER_SERVICE');
    expect(r.stderr).toContain('OTEL_SERVICE_NAME');
  });
});

describe('diag-instrumentation check on methods and endpoints (method depth, issue #43)', () => {
  let report = '';
  let work = '';

  beforeAll(async () => {
    const app = await startApp('nest11-cjs', {
      app: 'tracking-app',
      env: {
        DIAG_GHOST_TRACKING_ENABLED: 'true',
        DIAG_GHOST_TRACKING_KEPT: 'TrackingController#quarterly=partner quarterly sync',
      },
    });
    // Called beans: the controller (two of its routes), AsyncService (three of its four methods).
    await getJson(app.port, '/exercise');
    await getJson(app.port, '/heartbeat');
    await app.stop('SIGTERM');
    report = path.join(app.reportDir, 'diag-ghost-report.json');
    work = tempDir('cli-members');
  });

  it('fails on a method of a called bean and an endpoint never called in this run, in their own words', () => {
    const r = check(report, '--baseline', path.join(work, 'none.json'));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/1 new method and 2 new endpoints never called in this run/);
    expect(r.stdout).toMatch(
      /^ {2}method AsyncService\.archive never called in this run \(tracking\.module\.js:\d+\)$/m,
    );
    expect(r.stdout).toMatch(
      /^ {2}endpoint GET \/never-called never called in this run → TrackingController\.neverCalled \(tracking\.module\.js:\d+\)$/m,
    );
    // called ones, kept ones, and the methods of a bean untouched as a whole (the bean is the finding) are not
    expect(r.stdout).not.toMatch(/AsyncService\.(load|range|stream)\b/);
    expect(r.stdout).not.toMatch(/quarterly/);
    // a route's handler is judged as its route: listed once, by the route
    expect(r.stdout).not.toMatch(/method TrackingController\.neverCalled/);
    expect(r.stdout).toContain('a gate on this run only: one run is no verdict, so these beans, methods and endpoints');
    expect(r.stdout).toMatch(/^ {2}LegacyService\b/m);
    expect(r.stdout).not.toMatch(/method LegacyService\./);
  });

  it('accepts members into the baseline beside the beans; a member dropped from it is new again', () => {
    const baseline = path.join(work, 'baseline.json');
    expect(check(report, '--baseline', baseline, '--update-baseline').code).toBe(0);
    const written = JSON.parse(fs.readFileSync(baseline, 'utf8'));
    expect(written.beans).toContain('LegacyService');
    expect(written.beans).not.toContain('AsyncService#archive');
    expect(written.members).toEqual(expect.arrayContaining(['AsyncService#archive', 'http GET /never-called']));
    expect(written.members).not.toContain('TrackingController#quarterly');
    const clean = check(report, '--baseline', baseline);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toMatch(/^no new beans untouched in this run, methods or endpoints never called in this run/);

    fs.writeFileSync(
      baseline,
      JSON.stringify({ ...written, members: written.members.filter((m: string) => m !== 'AsyncService#archive') }),
    );
    const again = check(report, '--baseline', baseline);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain('1 new method never called in this run not in');
    expect(again.stdout.split('\n').filter((l) => /^ {2}\S/.test(l))).toEqual([
      expect.stringMatching(/^ {2}method AsyncService\.archive never called in this run/),
    ]);
  });

  it('gives SARIF one result per member at its file and line, its own rule, new unless in the baseline', () => {
    const r = check(report, '--format', 'sarif', '--baseline', path.join(work, 'baseline.json'));
    const run = JSON.parse(r.stdout).runs[0];
    expect(run.tool.driver.rules.map((x: any) => x.id)).toEqual([
      'untouched-bean',
      'untouched-method',
      'untouched-endpoint',
    ]);
    const archive = run.results.find((x: any) => x.partialFingerprints['diagMember/v1'] === 'AsyncService#archive');
    expect(archive).toMatchObject({
      ruleId: 'untouched-method',
      baselineState: 'new',
      locations: [{ physicalLocation: { artifactLocation: { uri: 'tracking.module.js' } } }],
    });
    expect(archive.locations[0].physicalLocation.region.startLine).toBeGreaterThan(0);
    const route = run.results.find((x: any) => x.partialFingerprints['diagMember/v1'] === 'http GET /never-called');
    expect(route).toMatchObject({ ruleId: 'untouched-endpoint', baselineState: 'unchanged' });
  });

  it('says what it gates on methods and endpoints in --help', () => {
    const help = spawnSync(process.execPath, [BIN, 'check', '--help'], { encoding: 'utf8' }).stdout;
    expect(help).toMatch(/never called in this run/);
    expect(help).toMatch(/members/);
  });
});
