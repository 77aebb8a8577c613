/**
 * A Redis Cluster of three masters, started here from Debian's redis-server with a password (`redis-cli --cluster
 * create`), and both products configured with the URL of ONE node, as a user would write it: the ghost ledger of a
 * NestJS app and the fleet sketches of two replicas. Their keys share a hash tag per service or sketch; the test
 * uses a service and a sketch whose slots live on another node than the one named, so the connection has to follow
 * the cluster (MOVED) to work at all.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { describeWithService } from '../../support/services';
import { freePort } from '../../support/ports';
import { tempDir } from '../../support/temp';
import { sleep, until, Worker } from '../fleet/harness';
import { getJson, startApp, type RunningApp } from '../support/app-process';
import { trackChild } from '../../support/children';

const PASSWORD = 'cluster-s3cret-pw';
const CLI = path.resolve(__dirname, '..', '..', '..', 'dist', 'ghost', 'cli', 'index.js');

/** Redis Cluster's key slot (CRC16/XMODEM of the hash tag, mod 16384), to pick names served by another node. */
function slotOf(key: string): number {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  const tag = open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(tag)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

describeWithService('redis', 'a three-master Redis Cluster named by one node', (bin) => {
  const nodes: ChildProcess[] = [];
  const ports: number[] = [];
  const apps: RunningApp[] = [];
  const workers: Worker[] = [];
  let printed = '';

  beforeAll(async () => {
    const cli = bin.replace(/redis-server$/, 'redis-cli');
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const dir = tempDir(`cluster-${i}`);
      ports.push(port);
      nodes.push(
        trackChild(
          spawn(
            bin,
            [
              '--port',
              String(port),
              '--bind',
              '127.0.0.1',
              '--requirepass',
              PASSWORD,
              '--masterauth',
              PASSWORD,
              '--cluster-enabled',
              'yes',
              '--cluster-config-file',
              path.join(dir, 'nodes.conf'),
              '--save',
              '',
              '--appendonly',
              'no',
              '--dir',
              dir,
              '--loglevel',
              'warning',
            ],
            { stdio: 'ignore' },
          ),
        ),
      );
    }
    await sleep(300);
    const create = spawnSync(
      cli,
      [
        '-a',
        PASSWORD,
        '--no-auth-warning',
        '--cluster',
        'create',
        ...ports.map((p) => `127.0.0.1:${p}`),
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${create.stdout}\n${create.stderr}`);
    // Wait until every node agrees the cluster is up.
    await until('cluster_state:ok on every node', 20_000, async () => {
      const states = ports.map(
        (p) =>
          spawnSync(cli, ['-a', PASSWORD, '--no-auth-warning', '-p', String(p), 'cluster', 'info'], {
            encoding: 'utf8',
          }).stdout,
      );
      return states.every((s) => /cluster_state:ok/.test(s)) ? true : undefined;
    });
  }, 60_000);

  afterAll(async () => {
    for (const a of apps) await a.stop('SIGKILL');
    for (const w of workers) await w.kill();
    for (const n of nodes) n.kill('SIGKILL');
    expect(printed).not.toContain(PASSWORD);
  });

  /** The first node's URL: the one a user would configure. */
  const url = () => `redis://:${PASSWORD}@127.0.0.1:${ports[0]}`;
  /** The slots the first node serves: redis-cli --cluster create gives the first master 0-5460. */
  const onFirstNode = (slot: number) => slot <= 5460;

  it('the ghost ledger: an app and the ledger CLI, given one node, follow the cluster', async () => {
    // A service name whose hash tag lives on another node than the one named.
    const service = ['cluster-shop', 'cluster-shop-2', 'cluster-shop-3', 'cluster-shop-4'].find(
      (name) => !onFirstNode(slotOf(`diag:ledger:{${name}}:meta`)),
    )!;
    const app = await startApp('nest11-cjs', {
      app: 'ledger-app',
      env: {
        LEDGER_APP_VERSION: 'v1',
        OTEL_SERVICE_NAME: service,
        DIAG_GHOST_TRACKING_ENABLED: 'true',
        DIAG_GHOST_TRACKING_LEDGER_URL: url(),
        DIAG_GHOST_TRACKING_LEDGER_PUSH_INTERVAL_MS: '100',
        DIAG_GHOST_TRACKING_LEDGER_HEARTBEAT_INTERVAL_MS: '300',
      },
    });
    apps.push(app);
    expect((await getJson(app.port, '/orders')).status).toBe(200);
    const answer = await until('the touch in the ledger, read through the cluster', 15_000, async () => {
      const run = spawnSync(
        process.execPath,
        [CLI, 'ledger', '--service', service, '--format', 'json', '--min-days', '0'],
        {
          env: { ...process.env, DIAG_GHOST_TRACKING_LEDGER_URL: url() },
          encoding: 'utf8',
        },
      );
      printed += run.stdout + run.stderr;
      if (run.status === 2) return undefined;
      const parsed = JSON.parse(run.stdout);
      return parsed.beans.find((b: { name: string; verdict: string }) => b.name === 'OrderService')?.verdict ===
        'in-use'
        ? parsed
        : undefined;
    });
    expect(answer.provenance).toMatchObject({ source: 'redis', liveProcesses: 1, versions: 1 });
    printed += app.stdout() + app.stderr();
  }, 60_000);

  it('the fleet sketches: two replicas, given one node, share one count through the cluster', async () => {
    // A sketch whose keys' hash tag lives on another node.
    const type = ['LIMIT', 'CLUSTERA', 'CLUSTERB', 'CLUSTERC', 'CLUSTERD'].find(
      (t) => !onFirstNode(slotOf(`diag:sketch:{${t}_60000}`)),
    )!;
    const env = {
      DIAG_SKETCH_REDIS_URL: url(),
      DIAG_SKETCH_REDIS_SYNC_INTERVAL_MS: '100',
      DIAG_SKETCH_REDIS_TIMEOUT_MS: '3000',
    };
    const replicas = [new Worker(env), new Worker(env)];
    workers.push(...replicas);
    await Promise.all(replicas.map((w) => w.ready()));
    await replicas[0]!.send(`hit ${type} 60000 shared 40 1000`);
    await replicas[1]!.send(`hit ${type} 60000 shared 40 1000`);
    // A sketch reads the fleet's totals of the cells it pushes: a third replica hits the key once per probe until
    // what it reads, less its own hits, is the two replicas' 80.
    const reader = new Worker(env);
    workers.push(reader);
    await reader.ready();
    let own = 0;
    // Generous: under a full test run on two cores a cluster round can take a while; the count is what matters.
    const others = await until('a new replica to read the fleet’s count through the cluster', 45_000, async () => {
      await reader.send(`hit ${type} 60000 shared 1 1000`);
      own++;
      await sleep(150);
      const { estimate } = await reader.send(`estimate ${type} 60000 shared`);
      return estimate - own >= 80 ? estimate - own : undefined;
    });
    expect(others).toBe(80);
    const status = await reader.send(`status ${type} 60000`);
    expect(status.placement.fleet).toMatchObject({ mode: 'fleet', nodes: 3 });
    replicas.push(reader);
    printed += replicas.map((w) => w.output()).join('');
  }, 60_000);
});
