/**
 * A bean's methods are the application's code (#43), its own base classes' included, never a library's. shapes-app's
 * `EntryRepository extends Repository` (TypeORM's custom repository, as users write one; no module exports it)
 * defines `label()`, which CheckInRepository inherits and the `/shapes` route calls. (Found by a review: the rule
 * for a library factory's class, one no module exports extending a library's, took it for TypeORM's.)
 */
import { LOADING_CASES, getJson, startApp, TRACKED_ONE_RUN_ENV, type RunningApp } from './support/app-process';

describe.each(LOADING_CASES)("an application base class's methods (%s)", (loading) => {
  let app: RunningApp | undefined;
  afterAll(async () => {
    await app?.stop();
  });

  it("lists the methods an unexported application base class defines, and none of the library's under it", async () => {
    app = await startApp(loading, { app: 'shapes-app', env: { ...TRACKED_ONE_RUN_ENV } });
    const res = await getJson(app.port, '/shapes');
    expect(res.body).toMatchObject({ entries: 'check-in' });
    await app.stop();
    const ghosts = app.readReport('diag-ghost-report.json');
    const bean = ghosts.verdicts.find((v: { name: string }) => v.name === 'CheckInRepository');
    expect(bean).toBeDefined();
    const methods = (bean.methods ?? []).map((m: { name: string; verdict: string }) => `${m.name}:${m.verdict}`);
    // TypeORM's Repository methods are the library's, never the application's findings
    expect(methods.filter((m: string) => /^(find|save|count|delete)\b/.test(m))).toEqual([]);
    // The base class is known to be the application's where its file is (the bean's source declares it); an ESM
    // application without the loader hook has no export to find its classes by, but its module's file declares
    // this one (shapes-app is one file), which the analysis reads: the same answer.
    expect(methods).toEqual(['label:in-use']);
  });
});
