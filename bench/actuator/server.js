'use strict';
// One side of the comparison, run as its own process so that the load generator and the server under test
// each get a core: `node server.js bare|actuator|actuator-versioned <beans>`. Reports its port over IPC, then measures its own
// event-loop delay between the parent's 'measure' and 'report' messages.
const http = require('node:http');
const path = require('node:path');
const { monitorEventLoopDelay } = require('node:perf_hooks');

const mode = process.argv[2];
const beans = Number(process.argv[3] ?? 1000);
const dist = path.resolve(__dirname, '../../dist/actuator');

/** Same shape as a real snapshot: n tracked beans with realistic names, half touched. */
function snapshot(n) {
  const names = Array.from({ length: n }, (_, i) => `com.example.service.Bean${String(i).padStart(4, '0')}Service`);
  return {
    disclaimer: 'Untouched means no tracked method was invoked during this run, not that the bean is unused.',
    trackedCount: n,
    touchedCount: Math.ceil(n / 2),
    untouchedCount: Math.floor(n / 2),
    untouched: names.filter((_, i) => i % 2 === 1),
    touched: names.filter((_, i) => i % 2 === 0),
    untrackableCount: 1,
    untrackable: { ConfigValue: 'no-methods' },
    frameworkSkipped: 12,
  };
}

async function main() {
  const report = snapshot(beans);
  let port;
  if (mode === 'actuator' || mode === 'actuator-versioned') {
    const { startActuator, actuatorSources } = require(dist);
    const { setLogger } = require(path.resolve(__dirname, '../../dist/shared/logger'));
    setLogger(null);
    const handle = await startActuator(
      {
        include: ['diag', 'health'],
        exclude: [],
        basePath: '/actuator',
        port: 0,
        address: '127.0.0.1',
        authToken: undefined,
      },
      // 'actuator': no version, so the snapshot is serialised on every request (the worst case).
      // 'actuator-versioned': the source offers a change counter, as a tracker can (it changes only on a first
      // touch, at most once per bean); here it never changes, the steady state of a running application.
      actuatorSources({
        ghosts: { ghostSnapshot: () => report },
        ghostsVersion: mode === 'actuator-versioned' ? () => 1 : undefined,
      }),
    );
    port = handle.port;
  } else if (mode === 'bare') {
    // The floor: a constant body of the same bytes with the same headers, no routing, no serialisation.
    const body = Buffer.from(JSON.stringify(report));
    const server = http.createServer((_req, res) => {
      res.writeHead(200, {
        'Content-Type': 'application/json; charset=utf-8',
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
        'Content-Length': body.length,
      });
      res.end(body);
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    port = server.address().port;
  } else {
    throw new Error(`unknown mode ${mode}`);
  }

  const histogram = monitorEventLoopDelay({ resolution: 1 });
  process.on('message', (msg) => {
    if (msg === 'measure') {
      histogram.reset();
      histogram.enable();
    } else if (msg === 'report') {
      histogram.disable();
      const ms = (ns) => ns / 1e6;
      process.send({
        eld: {
          p50: ms(histogram.percentile(50)),
          p99: ms(histogram.percentile(99)),
          max: ms(histogram.max),
          mean: ms(histogram.mean),
        },
      });
    } else if (msg === 'exit') {
      process.exit(0);
    }
  });
  process.send({ ready: true, url: `http://127.0.0.1:${port}${mode === 'bare' ? '/' : '/actuator/diag/ghosts'}` });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
