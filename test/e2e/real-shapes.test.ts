/**
 * The shapes issue #44 measured on real applications (test/fixtures/apps/shapes-app), each beside its control: a
 * guard, a pipe and an interceptor listed in `providers` and installed through APP_GUARD/APP_PIPE/APP_INTERCEPTOR
 * too; `useExisting` aliases, one nothing resolves and one injected; two modules of one name; middleware applied
 * with `consumer.apply()`, one on the route called and one on a route nothing calls; factory providers returning the
 * application's class. Phase 2 on, the app driven, then stopped: both reports read.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { LOADING_CASES, getJson, startApp, type RunningApp } from './support/app-process';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'ghost', 'cli', 'index.js');
describe.each(LOADING_CASES)('real-application shapes (%s)', (loading) => {
  let app: RunningApp;
  let report: any;
  let ghosts: any;
  let node: (name: string) => any;

  beforeAll(async () => {
    app = await startApp(loading, {
      app: 'shapes-app',
      // one run judged at once, so that the never-touched verdicts say what Phase 1 adds
      env: {
        DIAG_GHOST_TRACKING_ENABLED: 'true',
        DIAG_GHOST_TRACKING_LEDGER_MIN_DAYS: '0',
        DIAG_GHOST_TRACKING_LEDGER_MIN_PROCESS_HOURS: '0',
      },
    });
    report = app.readReport();
    node = (name) => report.graph.nodes.find((n: any) => n.name === name);
    for (let i = 0; i < 2; i++) {
      const res = await getJson(app.port, '/shapes');
      expect(res.body).toEqual({
        text: 'from diag',
        from: 'noreply@example.test',
        checkIns: ['api', 'admin'],
        entries: 'check-in',
      });
    }
    // The middleware applied to /shapes ran, as without the instrumentation.
    const res = await fetch(`http://127.0.0.1:${app.port}/shapes`);
    await res.text();
    expect(res.headers.get('x-shapes-stamp')).toBe('diag');
    await app.stop();
    ghosts = app.readReport('diag-ghost-report.json');
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('lists a guard, pipe or interceptor registered as a plain provider besides its APP_* registration', () => {
    for (const name of ['UserStatusGuard', 'TrimPipe', 'TimingInterceptor']) {
      expect(node(name)).toMatchObject({ verdict: 'candidate' });
      expect(report.ghostCandidates.beans).toContain(name);
    }
    // The registrations Nest calls stay entry points, and the instances they built were called.
    expect(node('APP_GUARD(UserStatusGuard)').entryPoints).toContain('global-enhancer:APP_GUARD');
    expect(node('APP_PIPE(TrimPipe)').entryPoints).toContain('global-enhancer:APP_PIPE');
    expect(node('RouteGuard').entryPoints).toContain('enhancer');
    expect(ghosts.touched).toEqual(expect.arrayContaining(['APP_GUARD(UserStatusGuard)', 'RouteGuard']));
    expect(ghosts.untouched).toEqual(expect.arrayContaining(['UserStatusGuard', 'TrimPipe', 'TimingInterceptor']));
  });

  it("judges an alias by what resolves its token, never by its target's entry points or calls", () => {
    // SmsConfig has an onModuleInit and is called on every request; its alias is resolved by nothing.
    expect(node('SMS_CONFIG_PROVIDER')).toMatchObject({ kind: 'alias', verdict: 'candidate' });
    expect(report.ghostCandidates.beans).toContain('SMS_CONFIG_PROVIDER');
    expect(report.ghostCandidates.beans).not.toContain('MAIL_CONFIG_PROVIDER');
    expect(ghosts.touched).toContain('SmsConfig');
    expect(ghosts.touched).not.toContain('SMS_CONFIG_PROVIDER');
    expect(ghosts.untrackable.SMS_CONFIG_PROVIDER).toBe('alias');
    const verdict = ghosts.verdicts.find((v: any) => v.name === 'SMS_CONFIG_PROVIDER');
    expect(verdict).toMatchObject({ ghostCandidate: true });
    expect(verdict.verdict).not.toBe('in-use');
  });

  it("lists an ORM repository nothing injects: extending TypeORM's Repository is no entry point", () => {
    // A real monorepo's six dead custom repositories were kept off the list as `extends-library-class:Repository`.
    expect(node('AuditRepository')).toMatchObject({ verdict: 'candidate' });
    expect(node('AuditRepository').entryPoints ?? []).toEqual([]);
    expect(report.ghostCandidates.beans).toEqual(expect.arrayContaining(['AuditRepository', 'ArchiveService']));
    // Injected only by a dead service, it is dead through it.
    expect(report.ghostCandidates.beans).toContain('ArchiveRepository');
    expect(node('ArchiveRepository')).toMatchObject({ neededOnlyBy: ['ArchiveService'] });
    // The one a controller injects and calls is no candidate, and Phase 2 saw it called.
    expect(report.ghostCandidates.beans).not.toContain('CheckInRepository');
    expect(ghosts.touched).toContain('CheckInRepository');
    expect(ghosts.untouched).toEqual(
      expect.arrayContaining(['AuditRepository', 'ArchiveRepository', 'ArchiveService']),
    );
    // The verdict says which: nothing injects the orphan, only the dead service injects its repository.
    const why = (name: string) => ghosts.verdicts.find((v: any) => v.name === name).why;
    expect(why('ArchiveService')).toMatch(/; nothing injects it either \(strongest signal\)$/);
    expect(why('ArchiveRepository')).toMatch(
      /; only the ghost candidate ArchiveService injects it: remove it together with that candidate$/,
    );
    // and the Phase 1 gate says the same of it, in words and in SARIF (never "nothing injects")
    const diagReport = path.join(app.reportDir, 'diag-report.json');
    const text = spawnSync(process.execPath, [CLI, 'check', diagReport], { encoding: 'utf8' }).stdout;
    expect(text).toMatch(
      /^ {2}ArchiveRepository \(.*\); only the ghost candidate ArchiveService injects it: remove it/m,
    );
    const sarif = JSON.parse(
      spawnSync(process.execPath, [CLI, 'check', diagReport, '--format', 'sarif'], { encoding: 'utf8' }).stdout,
    );
    const result = sarif.runs[0].results.find((r: any) =>
      /ArchiveRepository/.test(r.partialFingerprints['diagBean/v1']),
    );
    expect(result.message.text).toMatch(/that only the candidate ArchiveService injects/);
  });

  it('names an APP_GUARD alias by its target, as docs/reports.md says', () => {
    expect(node('APP_GUARD(AliasedGuard)')).toMatchObject({ kind: 'alias' });
    expect(node('APP_GUARD(AliasedGuard)').entryPoints).toContain('global-enhancer:APP_GUARD');
    expect(report.graph.nodes.map((n: any) => n.name)).not.toContain('APP_GUARD');
  });

  it('counts as untrackable only the beans a verdict calls untrackable (no module classes)', () => {
    const untrackableVerdicts = ghosts.verdicts.filter((v: any) => v.verdict === 'untrackable').map((v: any) => v.name);
    expect(Object.keys(ghosts.untrackable).sort()).toEqual(untrackableVerdicts.sort());
    expect(ghosts.untrackableCount).toBe(untrackableVerdicts.length);
    expect(Object.keys(ghosts.untrackable)).not.toContain('ShapesModule');
  });

  it('tracks middleware applied with consumer.apply(): created at start-up, in use once a request reaches it', () => {
    // Nest creates them in init(), after the container's bootstrap: they read "not created at start-up" and
    // untrackable in the verdicts, yet were counted nowhere (a real monorepo's 7 untrackable against 9 verdicts).
    for (const name of ['StampMiddleware', 'ShapesModule/AuditTrailMiddleware']) {
      expect(node(name)).toMatchObject({ role: 'middleware', eager: true, verdict: 'entry-point' });
      expect(node(name).entryPoints).toContain('middleware');
      expect(ghosts.untrackable[name]).toBeUndefined();
    }
    expect(ghosts.touched).toContain('StampMiddleware');
    expect(ghosts.untouched).toContain('ShapesModule/AuditTrailMiddleware');
    const verdict = (name: string) => ghosts.verdicts.find((v: any) => v.name === name);
    expect(verdict('StampMiddleware')).toMatchObject({ verdict: 'in-use' });
    // (this run is judged at once: never called, no entry point's call seen; an entry point, not a candidate)
    expect(verdict('ShapesModule/AuditTrailMiddleware')).toMatchObject({ verdict: 'never-touched' });
    expect(verdict('ShapesModule/AuditTrailMiddleware').why).not.toMatch(/injects/);
    // applied with .exclude(), Nest's renamed subclass stands in its place: the application's class and file are
    // still the ones the reports give, never a registration whose class's file was "not found"
    expect(node('StampMiddleware')).toMatchObject({
      className: 'StampMiddleware',
      source: expect.stringMatching(/main/),
    });
    expect(node('StampMiddleware')).not.toHaveProperty('registeredIn');
  });

  it('keeps the name of a provider whose class is applied as middleware too: Phase 2 tracked it by that name', () => {
    // The provider was named and tracked before Nest added the middleware; the middleware is named around it.
    expect(node('AuditTrailMiddleware')).toMatchObject({ role: 'provider', verdict: 'candidate' });
    expect(ghosts.untouched).toContain('AuditTrailMiddleware');
    // One name, one bean, one count: every name Phase 2 reports is a bean of the graph, and every verdict's bean
    // is touched, untouched or untrackable.
    const nodes = new Set(report.graph.nodes.map((n: any) => n.name));
    const judged = [...ghosts.touched, ...ghosts.untouched, ...Object.keys(ghosts.untrackable)];
    expect(judged.filter((name) => !nodes.has(name))).toEqual([]);
    expect(ghosts.verdicts.map((v: any) => v.name).filter((name: string) => !judged.includes(name))).toEqual([]);
  });

  it('gives a factory bean the class and source of the instance its factory returned', () => {
    // Nothing injects LEGACY_MESSAGES: a candidate a reader must be able to find.
    expect(report.ghostCandidates.beans).toContain('LEGACY_MESSAGES');
    expect(report.ghostCandidates.beans).not.toContain('MESSAGE_FORMAT');
    // MessageFormat is declared in the fixture's main file, as the controller is. An ES module entry file is known
    // to no hook (import-in-the-middle sees the modules it imports): there the controller is found in its module's
    // file (main.js declares both), and a class of unknown origin gives a factory no class name nor file (it might
    // be a library's).
    const controller = node('ShapesController');
    expect(controller.source).toMatch(/^main\.(ts|js)$/);
    for (const name of ['LEGACY_MESSAGES', 'MESSAGE_FORMAT']) {
      expect(node(name)).toMatchObject({ kind: 'factory' });
      if (loading === 'nest12-esm') {
        expect(node(name).source).toBeUndefined();
        continue;
      }
      expect(node(name).source).toBe(controller.source);
      expect(node(name).className).toBe('MessageFormat');
    }
  });

  it('says where each of two modules of one name is declared', () => {
    expect(node('CheckInModule/CheckInModule').moduleSource).toMatch(/check-in-api\/check-in\.module\.js$/);
    expect(node('CheckInModule/CheckInModule#2').moduleSource).toMatch(/check-in-admin\/check-in\.module\.js$/);
    expect(node('AdminCheckIn').moduleSource).toMatch(/check-in-admin\/check-in\.module\.js$/);
    expect(node('ShapesController').moduleSource).toBeUndefined();
  });
});
