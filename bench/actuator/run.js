'use strict';
// Actuator throughput against a bare node:http server answering the same bytes, side by side in one run.
//
//   npx tsc -p tsconfig.build.json && node bench/actuator/run.js [--runs 5] [--duration 5] [--connections 64] [--beans 1000]
//
// Each run starts both servers as child processes (in alternating order), warms each up, then loads it with
// autocannon from this process while the server measures its own event-loop delay. Medians across runs are
// reported, and the actuator/bare ratio, which is what stays comparable on a shared machine.
const { fork } = require('node:child_process');
const path = require('node:path');
const autocannon = require('autocannon');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const RUNS = arg('runs', 5);
const DURATION = arg('duration', 5);
const CONNECTIONS = arg('connections', 64);
const BEANS = arg('beans', 1000);
const WARMUP = 1;

function once(child, predicate) {
  return new Promise((resolve, reject) => {
    const onMessage = (m) => {
      if (predicate(m)) {
        child.off('message', onMessage);
        resolve(m);
      }
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

function load(url, duration) {
  return autocannon({ url, connections: CONNECTIONS, duration, pipelining: 1 });
}

async function measure(mode) {
  const child = fork(path.join(__dirname, 'server.js'), [mode, String(BEANS)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const { url } = await once(child, (m) => m && m.ready);
    const probe = await fetch(url);
    const bytes = (await probe.arrayBuffer()).byteLength;
    if (probe.status !== 200) throw new Error(`${mode} answered ${probe.status}`);
    await load(url, WARMUP);
    child.send('measure');
    const result = await load(url, DURATION);
    child.send('report');
    const { eld } = await once(child, (m) => m && m.eld);
    return {
      mode,
      bytes,
      rps: result.requests.average,
      p99: result.latency.p99,
      p50: result.latency.p50,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
      eld,
    };
  } finally {
    child.send('exit');
    child.kill();
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (n, d = 1) => n.toFixed(d);

const MODES = ['bare', 'actuator', 'actuator-versioned'];
const LABEL = {
  bare: 'bare node:http (constant body)',
  actuator: 'actuator, serialised per request',
  'actuator-versioned': 'actuator, versioned source',
};

async function main() {
  console.log(
    `node ${process.version}, ${require('node:os').cpus().length} cpus; ${RUNS} runs × ${DURATION}s, ${CONNECTIONS} connections, ${BEANS} beans`,
  );
  const rows = [];
  for (let run = 0; run < RUNS; run++) {
    // Rotate the order so no side always runs first (on a cooler machine) or last.
    const order = MODES.map((_, i) => MODES[(i + run) % MODES.length]);
    const results = {};
    for (const mode of order) results[mode] = await measure(mode);
    rows.push(results);
    console.log(
      `run ${run + 1}: ` +
        MODES.map(
          (m) =>
            `${m} ${fmt(results[m].rps, 0)} req/s p99 ${results[m].p99} ms ELD p99 ${fmt(results[m].eld.p99, 2)} ms`,
        ).join(' | ') +
        ` | ratios ${fmt(results.actuator.rps / results.bare.rps, 2)} / ${fmt(results['actuator-versioned'].rps / results.bare.rps, 2)}`,
    );
    for (const m of MODES) {
      const r = results[m];
      if (r.non2xx || r.errors) console.log(`  warning: ${m} had ${r.non2xx} non-2xx and ${r.errors} errors/timeouts`);
    }
  }
  const med = (mode, pick) => median(rows.map((r) => pick(r[mode])));
  const ratio = (mode) => rows.map((r) => r[mode].rps / r.bare.rps);
  const line = (title, cell) => console.log(`| ${title} | ${MODES.map(cell).join(' | ')} |`);
  console.log('');
  console.log(`| median of ${RUNS} runs | ${MODES.map((m) => LABEL[m]).join(' | ')} |`);
  console.log(`|---|${MODES.map(() => '---').join('|')}|`);
  line('response size (bytes)', (m) => String(rows[0][m].bytes));
  line('requests/s', (m) =>
    fmt(
      med(m, (x) => x.rps),
      0,
    ),
  );
  line('throughput vs bare (median of per-run ratios)', (m) => {
    const r = ratio(m);
    return `${fmt(median(r), 2)} (${fmt(Math.min(...r), 2)}–${fmt(Math.max(...r), 2)})`;
  });
  line('latency p50 / p99 (ms)', (m) => `${med(m, (x) => x.p50)} / ${med(m, (x) => x.p99)}`);
  line(
    'server event-loop delay p50 / p99 / max (ms)',
    (m) =>
      `${fmt(
        med(m, (x) => x.eld.p50),
        2,
      )} / ${fmt(
        med(m, (x) => x.eld.p99),
        2,
      )} / ${fmt(
        med(m, (x) => x.eld.max),
        2,
      )}`,
  );
  console.log('');
  for (const m of ['actuator', 'actuator-versioned']) {
    const r = median(ratio(m));
    console.log(`${LABEL[m]}: ${r >= 0.5 ? 'goal met' : 'GOAL MISSED'} (${fmt(r, 2)} × bare throughput; goal ≥ 0.5)`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
