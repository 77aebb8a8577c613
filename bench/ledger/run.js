'use strict';
// The ghost ledger's cost in Redis (issues #36, #43): N simulated processes of one service × B beans each with M
// methods, and E endpoints, every process a real LedgerWriter with its own connection to Debian's redis-server
// (started here on a free loopback port, no persistence). The writers' clock is simulated, so an hour of heartbeats
// takes a second.
//
//   npm run build && node bench/ledger/run.js [--processes 100] [--beans 3000] [--methods 10] [--endpoints 1000] [--json]
//
// Figures:
// - memory of the service's keys (MEMORY USAGE summed over diag:ledger:*) after start-up and the first touches
//   (70 % of the beans touched, each process a random 70 %, and 70 % of each touched bean's methods: across 100
//   processes nearly every method has its record, the worst case), goal ≤ 2 MiB; and after 5 deploys (a version
//   each, 1 % of the beans renamed per deploy, every process restarted);
// - steady state, one simulated hour with no new touch: Redis commands and bytes (in + out) per process-hour
//   (INFO commandstats and stats, CONFIG RESETSTAT before), goal: a heartbeat and a handful of commands per minute;
// - the read: readLedger of the whole service, median of 5 (what the CLI and {base}/diag/ledger cost).
// A hundred identical INFO lines (each writer's first write) say nothing here.
process.env.DIAG_LOG_LEVEL ??= 'warn';
const { spawn } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');
const { freePort } = require('../free-port');
const { arg } = require('../sketch/workload');

const root = path.resolve(__dirname, '..', '..');
const { LedgerWriter } = require(path.join(root, 'dist', 'ghost', 'ledger', 'writer'));
const { readLedger } = require(path.join(root, 'dist', 'ghost', 'ledger', 'reader'));
const { connectIORedis, parseRedisUrl } = require(path.join(root, 'dist', 'shared', 'redis'));

const PROCESSES = arg('processes', 100);
const BEANS = arg('beans', 3000);
const METHODS = arg('methods', 10);
const ENDPOINTS = arg('endpoints', 1000);
const PASSWORD = 'bench-ledger-pw';
const HEARTBEAT_MS = 60_000;
const PUSH_MS = 5_000;

const VERBS = [
  'find',
  'create',
  'update',
  'remove',
  'list',
  'count',
  'export',
  'import',
  'sync',
  'validate',
  'archive',
];
const NOUNS = ['Order', 'Invoice', 'Customer', 'Item', 'Price', 'Stock', 'Shipment', 'Coupon', 'Review', 'Payment'];

/** A bean's M methods, named and placed as a service's are (`findOrderById`, `syncStock`…), each on its own line. */
function methods(i) {
  const out = [];
  for (let j = 0; j < METHODS; j++) {
    const noun = NOUNS[(i + j) % NOUNS.length];
    out.push({
      name: `${VERBS[(i * 7 + j) % VERBS.length]}${noun}${j % 3 === 0 ? 'ById' : j % 3 === 1 ? 's' : ''}${j >= VERBS.length ? j : ''}`,
      source: { file: `src/features/feature-${i % 150}/service-${i}.service.ts`, line: 12 + j * 9 },
    });
  }
  // A class's methods are distinct names; the generator's rare repeats are dropped, as a class would have one.
  return [...new Map(out.map((m) => [m.name, m])).values()];
}

/** B beans in 150 modules, named and placed as a large NestJS app's are; E routes on the first beans' methods. */
function inventory(version, renamed = 0) {
  const beans = [];
  const endpoints = [];
  for (let i = 0; i < BEANS; i++) {
    const m = i % 150;
    const name = i < renamed ? `Renamed${version}Service${i}` : `Feature${m}Service${i}`;
    const tracked = i % 25 === 0 ? 'no-methods' : true;
    beans.push({
      name,
      module: `Feature${m}Module`,
      source: `dist/features/feature-${m}/service-${i}.service.js`,
      ghostCandidate: i % 40 === 0,
      tracked,
      ...(tracked === true && METHODS > 0 ? { methods: methods(i) } : {}),
    });
  }
  const handlers = beans.filter((b) => b.methods);
  for (let e = 0; e < ENDPOINTS && handlers.length > 0; e++) {
    const bean = handlers[e % handlers.length];
    const method = bean.methods[Math.floor(e / handlers.length) % bean.methods.length].name;
    const verb = ['GET', 'POST', 'PUT', 'DELETE'][e % 4];
    endpoints.push({
      kind: 'http',
      route: `${verb} /api/v1/feature-${e % 150}/resource-${e}/:id`,
      bean: bean.name,
      method,
    });
  }
  return { framework: 'nestjs', tracking: true, beans, ...(ENDPOINTS > 0 ? { endpoints } : {}) };
}

/** A process's first uses: its own random 70 % of the beans, and 70 % of each one's methods. */
function touchSome(writer, inv, at) {
  for (const b of inv.beans) {
    if (Math.random() >= 0.7 || b.tracked !== true) continue;
    writer.touched(b.name, at);
    for (const m of b.methods ?? []) if (Math.random() < 0.7) writer.memberTouched(b.name, m.name, at);
  }
}

function redisServer(port) {
  const bin = process.env.REDIS_SERVER_BIN || 'redis-server';
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--requirepass',
    PASSWORD,
    '--save',
    '',
    '--appendonly',
    'no',
  ];
  return spawn(bin, args, { stdio: 'ignore' });
}

async function command(client, ...args) {
  const [[err, value]] = await client.pipeline([args]).exec();
  if (err) throw err;
  return value;
}

function infoField(text, field) {
  const m = new RegExp(`^${field}:(\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

async function ledgerMemory(client) {
  let cursor = '0';
  let bytes = 0;
  let keys = 0;
  // By kind of key (`members:12` → members): what the memory is made of.
  const kinds = {};
  do {
    const [next, batch] = await command(client, 'scan', cursor, 'match', 'diag:ledger:*', 'count', 1000);
    cursor = next;
    for (const key of batch) {
      const size = Number(await command(client, 'memory', 'usage', key, 'samples', 0));
      if (process.env.LEDGER_BENCH_KEYS) console.log(`${key} ${size}`);
      bytes += size;
      keys++;
      const kind = key.slice(key.indexOf('}:') + 2).replace(/:.*$/, '');
      kinds[kind] = (kinds[kind] ?? 0) + size;
    }
  } while (cursor !== '0');
  return { bytes, keys, kinds };
}

/** How many member records there are, and how many member buckets left the compact encoding. */
async function memberBuckets(client) {
  let records = 0;
  let large = 0;
  for (let i = 0; i < 512; i++) {
    const key = `diag:ledger:{bench}:members:${i}`;
    records += Number(await command(client, 'hlen', key));
    const encoding = await command(client, 'object', 'encoding', key).catch(() => null);
    if (encoding === 'hashtable') large++;
  }
  return [records, large];
}

async function traffic(client) {
  const stats = await command(client, 'info', 'stats');
  const commandstats = String(await command(client, 'info', 'commandstats'));
  let calls = 0;
  for (const m of commandstats.matchAll(/calls=(\d+)/g)) calls += Number(m[1]);
  return {
    calls,
    bytes: infoField(String(stats), 'total_net_input_bytes') + infoField(String(stats), 'total_net_output_bytes'),
  };
}

async function main() {
  const port = await freePort();
  const server = redisServer(port);
  const target = parseRedisUrl(`redis://:${PASSWORD}@127.0.0.1:${port}`);
  const admin = connectIORedis(target, 30_000, () => undefined);
  let now = Date.now();
  const clock = () => now;
  let writers = [];
  const spawnFleet = (version, renamed) => {
    const inv = inventory(version, renamed);
    writers = Array.from({ length: PROCESSES }, () => {
      const w = new LedgerWriter({
        client: connectIORedis(target, 30_000, () => undefined),
        address: target.address,
        redact: target.redact,
        service: 'bench',
        serviceVersion: version,
        tracking: true,
        pushIntervalMs: PUSH_MS,
        heartbeatIntervalMs: HEARTBEAT_MS,
        retentionDays: 30,
        clock,
        ownsClient: true,
        // A warm-up's uses queued behind 99 others' are not an outage here.
        timeoutMs: 120_000,
      });
      w.inventoryReady(inv);
      return w;
    });
    return inv;
  };
  const round = () => Promise.all(writers.map((w) => w.tick()));
  // The first uses' rounds, ten processes at a time, then rounds until every process's uses are in: 100 warm-ups of
  // 21,000 uses each in one instant queue up on Redis past the client's 30 s timeout on a busy machine, and are sent
  // again; the steady state is measured after them, not while they are still being sent.
  const drain = async () => {
    for (let i = 0; i < writers.length; i += 10) await Promise.all(writers.slice(i, i + 10).map((w) => w.tick()));
    const until = Date.now() + 300_000;
    while (writers.some((w) => w.status().pendingTouches > 0) && Date.now() < until) {
      now += PUSH_MS;
      await round();
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  try {
    for (let i = 0; ; i++) {
      try {
        await command(admin, 'ping');
        break;
      } catch (err) {
        if (i > 100) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const version = String(await command(admin, 'info', 'server')).match(/redis_version:(\S+)/)[1];
    const quiet = process.argv.includes('--json') || require.main !== module;
    const log = (line) => quiet || console.log(line);
    log(`node ${process.version}, ${os.cpus()[0].model} x${os.cpus().length}, redis ${version}`);
    log(
      `${PROCESSES} processes × ${BEANS} beans × ${METHODS} methods, ${ENDPOINTS} endpoints, one service; heartbeat ${HEARTBEAT_MS / 1000} s, rounds every ${PUSH_MS / 1000} s`,
    );

    // Start-up: every process's inventory, then its first touches (70 % of the beans, its own random 70 %).
    const inv = spawnFleet('v1', 0);
    await round();
    for (const w of writers) touchSome(w, inv, now);
    now += PUSH_MS;
    await drain();
    const afterStart = await ledgerMemory(admin);
    const [memberRecords, encodings] = await memberBuckets(admin);

    // Steady state: one hour, no new touch, every process heartbeating (and one of them pruning once).
    await command(admin, 'config', 'resetstat');
    const before = await traffic(admin);
    for (let minute = 0; minute < 60; minute++) {
      now += HEARTBEAT_MS;
      await round();
    }
    const after = await traffic(admin);
    // INFO itself counts as a command and adds bytes: the two INFO calls of `traffic` are taken off.
    const steadyCalls = (after.calls - before.calls - 2) / PROCESSES;
    const steadyBytes = (after.bytes - before.bytes) / PROCESSES;

    // The read a tech lead makes.
    const reads = [];
    let answer;
    for (let i = 0; i < 5; i++) {
      const t0 = process.hrtime.bigint();
      answer = await readLedger({
        client: admin,
        service: 'bench',
        thresholds: { minDays: 14, minProcessHours: 168 },
        address: target.address,
        now,
      });
      reads.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    reads.sort((a, b) => a - b);

    // Five deploys: each a new version with 1 % of the beans renamed, every process restarted.
    for (let d = 2; d <= 6; d++) {
      for (const w of writers) {
        w.end();
      }
      await new Promise((r) => setTimeout(r, 50));
      await Promise.all(writers.map((w) => w.close()));
      now += 3_600_000;
      const next = spawnFleet(`v${d}`, Math.round(BEANS * 0.01) * (d - 1));
      await round();
      for (const w of writers) touchSome(w, next, now);
      now += PUSH_MS;
      await drain();
    }
    const afterDeploys = await ledgerMemory(admin);
    const result = {
      processes: PROCESSES,
      beans: BEANS,
      methodsPerBean: METHODS,
      endpoints: ENDPOINTS,
      memberRecords,
      memberBucketsLarge: encodings,
      memoryBytes: afterStart.bytes,
      keys: afterStart.keys,
      memoryByKind: afterStart.kinds,
      memoryAfter5DeploysBytes: afterDeploys.bytes,
      steadyCommandsPerProcessHour: Math.round(steadyCalls),
      steadyBytesPerProcessHour: Math.round(steadyBytes),
      readMs: Math.round(reads[2] * 10) / 10,
      verdicts: answer.counts,
    };
    if (process.argv.includes('--json') && require.main === module) console.log(JSON.stringify(result));
    else if (!quiet) {
      log(
        `memory per service: ${(afterStart.bytes / 1024).toFixed(0)} KiB in ${afterStart.keys} keys (goal ≤ 2048 KiB); ` +
          `after 5 deploys: ${(afterDeploys.bytes / 1024).toFixed(0)} KiB`,
      );
      log(
        `  of which ${Object.entries(afterStart.kinds)
          .sort((a, b) => b[1] - a[1])
          .map(([kind, b]) => `${kind} ${(b / 1024).toFixed(0)} KiB`)
          .join(', ')}`,
      );
      log(
        `member records: ${memberRecords} (${METHODS} methods × ${BEANS} beans, ${ENDPOINTS} endpoints); ` +
          `member buckets out of the compact encoding: ${encodings} of 512`,
      );
      log(
        `steady state per process-hour: ${result.steadyCommandsPerProcessHour} commands (${(result.steadyCommandsPerProcessHour / 60).toFixed(1)} a minute), ` +
          `${(result.steadyBytesPerProcessHour / 1024).toFixed(1)} KiB in + out`,
      );
      log(`readLedger of ${BEANS} beans: ${result.readMs} ms (median of 5)`);
    }
    return result;
  } finally {
    await Promise.all(writers.map((w) => w.close()));
    admin.disconnect();
    server.kill('SIGKILL');
  }
}

module.exports = { measureLedger: main };

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
