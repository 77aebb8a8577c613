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
  console.log('> building the package and the example shop (nothing to install)…');
  const { buildPackage, buildShop } = require('./prepare-test-fixtures.js');
  await buildPackage();
  // Beside the fixtures the tests build, so that it resolves the root's NestJS 11 like them.
  const appDir = path.join(root, 'test', 'fixtures', 'nest11', 'out-demo', 'shop');
  buildShop(appDir);

  const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-demo-'));
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
  const app = spawn(
    process.execPath,
    ['--require', path.join(root, 'test/fixtures/telemetry/telemetry.cjs'), 'main.js'],
    {
      cwd: appDir,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
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

  const base = `http://127.0.0.1:${actuatorPort}/actuator`;
  const report = await (await fetch(`${base}/diag`)).json();
  const live = await (await fetch(`${base}/diag/ghosts`)).json();
  app.kill('SIGTERM');
  await new Promise((r) => app.once('exit', r));

  // Most likely dead first: what both phases say (nothing injects it and nothing called it), then each alone.
  const nodes = new Map(report.graph.nodes.map((n) => [n.name, n]));
  const where = (name) => {
    const n = nodes.get(name);
    return n ? [n.module, n.source].filter(Boolean).join(', ') : '';
  };
  const candidates = new Set(report.ghostCandidates.beans);
  const untouched = new Set(live.untouched);
  const both = [...candidates].filter((b) => untouched.has(b));
  const list = (title, beans, why) => {
    console.log(`\n> ${title}`);
    if (beans.length === 0) console.log('  (none)');
    for (const bean of beans) console.log(`  - ${bean.padEnd(24)} ${where(bean).padEnd(36)} ${why}`);
  };
  list(
    'Most likely dead: ghost candidate (Phase 1) AND untouched during the run (Phase 2)',
    both,
    'nothing injects it, nothing called it',
  );
  list(
    'Untouched during the run, though something injects it (Phase 2 only)',
    [...untouched].filter((b) => !candidates.has(b)),
    'injected, never called in this run',
  );
  const touched = new Set(live.touched);
  list(
    'Ghost candidates Phase 2 cannot judge (nothing to wrap): Phase 1 alone speaks',
    [...candidates].filter((b) => b in live.untrackable),
    'nothing injects it; untrackable',
  );
  list(
    'Ghost candidates that were called after all (used by lookup or by type): not dead',
    [...candidates].filter((b) => touched.has(b)),
    'nothing injects it, but it was called',
  );
  console.log(
    `\n  ${report.orphans.length} beans nothing injects ("orphans", before the rules): ` +
      `${report.ghostCandidates.entryPointsExcluded} are entry points the framework calls (controllers, crons, guards…), ` +
      `${report.ghostCandidates.notInstantiatedExcluded} not created at start-up, ` +
      `${report.ghostCandidates.lookedUpExcluded ?? 0} looked up by token — the rest are the candidates above.`,
  );
  console.log(`  touched: ${live.touched.join(', ')}`);
  console.log(
    `  untrackable: ${Object.entries(live.untrackable)
      .map(([b, why]) => `${b} (${why})`)
      .join(', ')}`,
  );

  console.log(`\nReports in ${reportDir}:`);
  for (const f of fs.readdirSync(reportDir)) console.log(`  ${path.join(reportDir, f)}`);
  console.log(`Open ${path.join(reportDir, 'diag-report.html')} in a browser for the graph.`);
  console.log('Untouched over one short run is not proof: keep Phase 2 on under real traffic before deleting code.');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
