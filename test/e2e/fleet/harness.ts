import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
import { trackChild } from '../../support/children';
import { tempDir } from '../../support/temp';

const WORKER = path.resolve(__dirname, '..', '..', 'fixtures', 'fleet', 'worker.js');

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Debian's redis-server on a free loopback port, with a password and no persistence. */
export class RedisServer {
  private proc: ChildProcess | undefined;
  private log = '';
  readonly dir = tempDir('redis');

  constructor(
    private readonly bin: string,
    readonly port: number,
    readonly password: string,
    /** More redis-server arguments (`--maxmemory-policy`, `--replicaof`…). */
    private readonly extraArgs: readonly string[] = [],
  ) {}

  get url(): string {
    return `redis://:${encodeURIComponent(this.password)}@127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  async start(): Promise<void> {
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--requirepass',
      this.password,
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      this.dir,
      '--loglevel',
      'warning',
      ...this.extraArgs,
    ];
    const proc = trackChild(spawn(this.bin, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
    proc.stdout!.on('data', (d) => (this.log += d));
    proc.stderr!.on('data', (d) => (this.log += d));
    this.proc = proc;
    await until(`redis-server on ${this.port}`, 10_000, async () => ((await this.ping()) ? true : undefined));
  }

  /** One PING over a raw socket (AUTH first); true on +PONG. */
  ping(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = net.connect(this.port, '127.0.0.1');
      let data = '';
      socket.setTimeout(500, () => socket.destroy());
      socket.on('error', () => resolve(false));
      socket.on('close', () => resolve(data.includes('+PONG')));
      socket.on('connect', () => socket.write(`AUTH ${this.password}\r\nPING\r\nQUIT\r\n`));
      socket.on('data', (d) => (data += d));
    });
  }

  /** Sends one command (RESP array) and returns the raw reply. */
  command(...args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(this.port, '127.0.0.1');
      let data = '';
      const encode = (parts: string[]) =>
        `*${parts.length}\r\n${parts.map((p) => `$${Buffer.byteLength(p)}\r\n${p}\r\n`).join('')}`;
      socket.setTimeout(2000, () => socket.destroy(new Error('redis command timed out')));
      socket.on('error', reject);
      socket.on('close', () => resolve(data));
      socket.on('connect', () => socket.write(encode(['AUTH', this.password]) + encode(args) + encode(['QUIT'])));
      socket.on('data', (d) => (data += d));
    });
  }

  signal(sig: NodeJS.Signals): void {
    this.proc?.kill(sig);
  }

  async stop(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGCONT');
    proc.kill('SIGKILL');
    await exited;
  }

  output(): string {
    return this.log;
  }
}

/** A fleet replica (test/fixtures/fleet/worker.js) driven over stdin, one JSON answer per command. */
export class Worker {
  private readonly proc: ChildProcess;
  private out = '';
  private err = '';
  private readonly answers: any[] = [];
  private waiting: ((v: any) => void) | undefined;
  readonly exited: Promise<number | null>;

  constructor(env: NodeJS.ProcessEnv) {
    this.proc = trackChild(
      spawn(process.execPath, [WORKER], {
        env: { ...process.env, DIAG_LOG_LEVEL: 'info', ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    );
    this.exited = new Promise((r) => this.proc.once('exit', (code) => r(code)));
    this.proc.stderr!.on('data', (d) => (this.err += d));
    let buffer = '';
    this.proc.stdout!.on('data', (d) => {
      this.out += d;
      buffer += d;
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (!line.startsWith('{')) continue;
        const answer = JSON.parse(line);
        if (this.waiting) {
          const w = this.waiting;
          this.waiting = undefined;
          w(answer);
        } else this.answers.push(answer);
      }
    });
  }

  private next(): Promise<any> {
    const ready = this.answers.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`worker gave no answer\nstdout:\n${this.out}\nstderr:\n${this.err}`)),
        15_000,
      );
      // A worker that ended unanswered must not hold the jest worker open for the rest of the 15 s.
      timer.unref();
      this.waiting = (v) => {
        clearTimeout(timer);
        resolve(v);
      };
    });
  }

  async ready(): Promise<void> {
    await this.next();
  }

  async send(command: string): Promise<any> {
    this.proc.stdin!.write(`${command}\n`);
    const answer = await this.next();
    if (answer.error) throw new Error(`${command}: ${answer.error}\n${this.err}`);
    return answer;
  }

  /** Both streams: what the package logged, for the no-password checks. */
  output(): string {
    return this.out + this.err;
  }

  async kill(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
    await this.exited;
  }
}
