import { ledgerAnswer, type LedgerEvidence } from '../../../src/ghost/ledger/answer';
import { jointText, jointView } from '../../../src/ghost/ledger/joint';

const DAY = 86_400_000;
const now = Date.UTC(2026, 10, 27);
const thresholds = {
  minDays: 14,
  minProcessHours: 168,
  minTrackedShare: 1,
  lastUseResolutionMs: DAY,
  source: 'service' as const,
};
const provenance = {
  source: 'redis' as const,
  since: new Date(now - 30 * DAY).toISOString(),
  processes: 3,
  liveProcesses: 2,
  processHours: 900,
  trackedProcesses: 3,
  untrackedProcessHours: 0,
  versions: 1,
  lastWriteAgoMs: 1000,
  reset: false,
  silent: false,
  versionDetails: [],
};

/** One bean of a service: touched or not, a month of evidence. */
function bean(name: string, touched: boolean, className = name, source = `libs/shared/src/${name}.ts`): LedgerEvidence {
  return {
    name,
    className,
    source,
    ghostCandidate: !touched,
    tracked: true,
    ...(touched ? { lastTouched: now - DAY } : {}),
    firstSeen: now - 30 * DAY,
    processHours: 500,
    live: true,
  };
}

describe('the joint view of several services', () => {
  const api = ledgerAnswer(
    'app-api',
    [bean('PushSender', false), bean('Clock', true), bean('LegacyExporter', false), bean('ApiOnly', false)],
    thresholds,
    provenance,
    now,
  );
  const admin = ledgerAnswer(
    'admin-api',
    [bean('PushSender', true), bean('Clock', true), bean('LegacyExporter', false)],
    thresholds,
    provenance,
    now,
  );

  it('says "remove the registration" for a class never used in one service and used in another', () => {
    const joint = jointView([api, admin]);
    const push = joint.classes.find((c) => c.className === 'PushSender')!;
    expect(push).toMatchObject({ action: 'remove-registration', where: ['app-api'], usedIn: ['admin-api'] });
    expect(push.why).toBe(
      'registered in app-api and never used there, used in admin-api: remove the registration, not the class',
    );
  });

  it('says "delete the class" only when every service that registers it never uses it', () => {
    const joint = jointView([api, admin]);
    expect(joint.classes.find((c) => c.className === 'LegacyExporter')).toMatchObject({
      action: 'delete-class',
      where: ['admin-api', 'app-api'],
    });
    expect(joint.classes.find((c) => c.className === 'ApiOnly')).toMatchObject({ action: 'delete-class' });
    expect(joint.classes.find((c) => c.className === 'Clock')).toMatchObject({ action: 'keep' });
    expect(joint.classes.map((c) => c.action)).toEqual(['remove-registration', 'delete-class', 'delete-class', 'keep']);
  });

  it("never says delete a class that is not the application's: a library's class it registers (Nest's Logger)", () => {
    const registered = (module: string): LedgerEvidence => ({
      ...bean('Logger', false, 'Logger', `src/${module}.module.ts`),
      registered: true,
    });
    const joint = jointView([
      ledgerAnswer('app-api', [registered('user')], thresholds, provenance, now),
      ledgerAnswer('admin-api', [registered('wallet')], thresholds, provenance, now),
    ]);
    // one class, whichever module registers it, and its registrations to remove
    expect(joint.classes).toEqual([
      expect.objectContaining({ className: 'Logger', action: 'remove-registration', where: ['admin-api', 'app-api'] }),
    ]);
    expect(joint.classes[0]).not.toHaveProperty('source');
    expect(joint.classes[0]!.why).toMatch(/a library's class, a value or a factory: remove the registrations$/);
    // every registration, where its lines are: one per service here
    expect(joint.classes[0]!.registrations!.map((r) => [r.service, r.source])).toEqual([
      ['app-api', 'src/user.module.ts'],
      ['admin-api', 'src/wallet.module.ts'],
    ]);
  });

  it('never claims whose a class is when its file was not found: the registrations go, deleting it is a condition', () => {
    const unexported = (module: string): LedgerEvidence => ({
      ...bean('HiddenHelper', false, 'HiddenHelper', `src/${module}.module.ts`),
      registered: true,
      classFileUnknown: true,
    });
    const joint = jointView([
      ledgerAnswer('app-api', [unexported('user')], thresholds, provenance, now),
      ledgerAnswer('admin-api', [unexported('user')], thresholds, provenance, now),
      ledgerAnswer('jobs', [unexported('jobs')], thresholds, provenance, now),
    ]);
    // neither "delete the class" (it may be a library's) nor "not the application's" (it may be its own)
    const [shared, other] = joint.classes;
    expect(shared).toMatchObject({
      className: 'HiddenHelper',
      source: 'src/user.module.ts',
      action: 'remove-registration',
      where: ['admin-api', 'app-api'],
    });
    expect(shared!.why).toMatch(/remove the registrations; .* if the class is the application's, delete it too$/);
    // one of another module's file is not merged with it: two classes of one name may be unrelated
    expect(other).toMatchObject({ source: 'src/jobs.module.ts', where: ['jobs'] });
  });

  it('keeps apart two classes of one name in different files', () => {
    const other = ledgerAnswer(
      'admin-api',
      [bean('PushSender', true, 'PushSender', 'apps/admin/src/push.ts')],
      thresholds,
      provenance,
      now,
    );
    const joint = jointView([api, other]);
    expect(joint.classes.find((c) => c.className === 'PushSender' && c.source?.startsWith('libs'))).toMatchObject({
      action: 'delete-class',
    });
  });

  it('says what a registration goes together with: the candidates that alone inject it', () => {
    const logger = (module: string): LedgerEvidence => ({
      ...bean('Logger', false, 'Logger', `src/${module}.module.ts`),
      registered: true,
      ghostCandidate: true,
      neededOnlyBy: ['CreateUserCliController'],
    });
    const joint = jointView([
      ledgerAnswer('app-api', [logger('user')], thresholds, provenance, now),
      ledgerAnswer('admin-api', [logger('user')], thresholds, provenance, now),
    ]);
    expect(joint.classes[0]).toMatchObject({
      action: 'remove-registration',
      neededOnlyBy: ['CreateUserCliController'],
    });
    expect(joint.classes[0]!.why).toMatch(/; together with CreateUserCliController, which alone injects it$/);
  });

  it('says which services have gone silent: their verdicts are those of the code last seen running', () => {
    const quiet = ledgerAnswer('jobs', [bean('Clock', true)], thresholds, { ...provenance, silent: true }, now);
    const joint = jointView([api, quiet]);
    expect(joint.silent).toEqual(['jobs']);
    expect(jointText(joint)).toMatch(/^ {2}WARNING: jobs has gone silent: /m);
    expect(jointView([api, admin])).not.toHaveProperty('silent');
  });

  it('reads as one line per class to act on', () => {
    const text = jointText(jointView([api, admin]));
    expect(text).toMatch(/^joint ghost ledger of app-api, admin-api\n/);
    expect(text).toMatch(
      /remove-registration +PushSender \(libs\/shared\/src\/PushSender\.ts\): registered in app-api/,
    );
    expect(text).toMatch(/1 more in use or not judged yet/);
  });
});
