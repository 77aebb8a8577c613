'use strict';
// `npm run demo`: builds the package and the example shop (examples/shop), starts it as a real NestJS
// process under the instrumentation with Phase 2 and the actuator on, drives a few requests, prints what
// the ghost detector found and where, then stops the app the way a deployment would (SIGTERM).
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

async function main() {
  console.log('> building the package and the example app…');
  await require('./prepare-test-fixtures.js')();

  const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-demo-'));
  const appDir = path.join(root, 'test', 'fixtures', 'nest11', 'out-cjs', 'ghost-app');
  const env = {
    ...process.env,
    DIAG_GHOST_TRACKING_ENABLED: 'true',
    DIAG_REPORT_DIR: reportDir,
    MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: '*',
    MANAGEMENT_SERVER_PORT: '0',
    OTEL_TRACES_EXPORTER: 'none',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
  };
  console.log('> starting examples/shop (NestJS 11) with: node --require telemetry.cjs main.js');
  const app = spawn(process.execPath, ['--require', path.join(root, 'test/fixtures/telemetry/telemetry.cjs'), 'main.js'], {
    cwd: appDir,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  app.stdout.on('data', (d) => {
    out += d;
    process.stdout.write(d);
  });
  const ready = (re) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`app did not print ${re}`)), 30_000);
      const check = () => {
        const m = re.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m);
        }
      };
      app.stdout.on('data', check);
      check();
    });
  const port = Number((await ready(/LISTENING (\d+)/))[1]);
  const actuatorPort = Number((await ready(/actuator listening on http:\/\/[^:]+:(\d+)/))[1]);

  console.log(`\n> driving a few requests against http://127.0.0.1:${port}`);
  for (const p of ['/users', '/users/lookup', '/users/order', '/billing']) {
    const res = await fetch(`http://127.0.0.1:${port}${p}`);
    console.log(`  GET ${p} -> ${res.status} ${await res.text()}`);
  }
  // passport's 'local' strategy, through AuthGuard('local'): both count as used from here on
  const login = await fetch(`http://127.0.0.1:${port}/users/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'ada', password: 'any' }),
  });
  console.log(`  POST /users/login -> ${login.status} ${await login.text()}`);

  const report = JSON.parse(fs.readFileSync(path.join(reportDir, 'diag-report.json'), 'utf8'));
  console.log('\n> Phase 1: ghost candidates (LOW confidence) from diag-report.json');
  for (const bean of report.ghostCandidates.beans) console.log(`  - ${bean}`);
  console.log(
    `  (${report.orphans.length} orphans: ${report.ghostCandidates.entryPointsExcluded} entry points, ` +
      `${report.ghostCandidates.notInstantiatedExcluded} not instantiated at startup)`,
  );

  const base = `http://127.0.0.1:${actuatorPort}/actuator`;
  const live = await (await fetch(`${base}/diag/ghosts`)).json();
  console.log(`\n> Phase 2: live snapshot from ${base}/diag/ghosts`);
  console.log(`  touched:   ${live.touched.join(', ')}`);
  console.log(`  untouched: ${live.untouched.join(', ')}`);
  console.log(`  untrackable: ${JSON.stringify(live.untrackable)}`);

  app.kill('SIGTERM');
  await new Promise((r) => app.once('exit', r));
  console.log(`\nReports in ${reportDir}:`);
  for (const f of fs.readdirSync(reportDir)) console.log(`  ${path.join(reportDir, f)}`);
  console.log('Beans that are ghost candidates AND untouched over long realistic runs are the strongest signal.');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
