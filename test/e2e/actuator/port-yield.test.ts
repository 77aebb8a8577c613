/**
 * The actuator never takes the application's port (issue #44): an application told to listen on the actuator's
 * port gets it, answers its own routes there, and the actuator moves to a free port with one WARN naming both.
 */
import { freePort } from '../../support/ports';
import { LOADING_CASES, getJson, startApp, type RunningApp } from '../support/app-process';

describe.each(LOADING_CASES)("an application on the actuator's port (%s)", (loading) => {
  let app: RunningApp | undefined;
  afterEach(async () => {
    await app?.stop();
    app = undefined;
  });

  it('gets the port; the actuator gives way, says so once and keeps answering elsewhere', async () => {
    const port = await freePort();
    app = await startApp(loading, {
      app: 'shapes-app',
      env: {
        PORT: String(port),
        MANAGEMENT_SERVER_PORT: String(port),
        MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: 'diag,health',
      },
    });
    expect(app.port).toBe(port);
    const own = await getJson(port, '/shapes');
    expect(own.status).toBe(200);
    expect(own.body.text).toBe('from diag');

    const warnings = app
      .stderr()
      .split('\n')
      .filter((l) => l.includes('gave it up'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`port ${port}`);
    const moved = /now listens on http:\/\/127\.0\.0\.1:(\d+)\/actuator/.exec(warnings[0]);
    expect(moved).not.toBeNull();
    const actuatorPort = Number(moved![1]);
    expect(actuatorPort).not.toBe(port);
    const health = await getJson(actuatorPort, '/actuator/health');
    expect(health.status).toBe(200);
    expect(app.stderr()).not.toMatch(/EADDRINUSE/);
  });
});
