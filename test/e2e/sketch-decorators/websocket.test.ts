import { io, type Socket } from 'socket.io-client';
import WebSocket from 'ws';
import { startApp, type RunningApp } from '../support/app-process';

/**
 * The sketch decorators on a real WebSocket gateway (test/fixtures/apps/sketch-ws-app, Nest 11), on Nest's
 * socket.io adapter and its ws adapter, driven by real clients: over the limit the handler is not run, the
 * client gets Nest's `exception` event with the code and retryAfterSeconds, and the connection stays open.
 */

/** One client, the same three steps whichever the library: send a chat message, collect what comes back. */
interface ChatClient {
  send(user: string, text: string): void;
  sendEvent(event: string, data: unknown): void;
  /** Events received so far, in order: [event, data]. */
  readonly received: [string, any][];
  connected(): boolean;
  close(): void;
}

async function socketIoClient(port: number): Promise<ChatClient> {
  const socket: Socket = io(`http://127.0.0.1:${port}`, { transports: ['websocket'], reconnection: false });
  const received: [string, any][] = [];
  socket.onAny((event: string, data: unknown) => received.push([event, data]));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  return {
    send: (user, text) => socket.emit('chat', { user, text }),
    sendEvent: (event, data) => socket.emit(event, data),
    received,
    connected: () => socket.connected,
    close: () => socket.close(),
  };
}

async function wsClient(port: number): Promise<ChatClient> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}`);
  const received: [string, any][] = [];
  socket.on('message', (raw) => {
    const { event, data } = JSON.parse(raw.toString()) as { event: string; data: unknown };
    received.push([event, data]);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return {
    send: (user, text) => socket.send(JSON.stringify({ event: 'chat', data: { user, text } })),
    sendEvent: (event, data) => socket.send(JSON.stringify({ event, data })),
    received,
    connected: () => socket.readyState === WebSocket.OPEN,
    close: () => socket.close(),
  };
}

async function until<T>(what: string, fn: () => T | undefined, ms = 5_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each([
  ['socket.io', socketIoClient],
  ['ws', wsClient],
] as const)('sketch decorators on a WebSocket gateway (nest11-cjs, %s adapter)', (adapter, connect) => {
  let app: RunningApp;
  const clients: ChatClient[] = [];

  beforeAll(async () => {
    app = await startApp('nest11-cjs', { app: 'sketch-ws-app', env: { SKETCH_WS_ADAPTER: adapter, NEST_LOGS: '1' } });
  }, 60_000);

  afterAll(async () => {
    for (const c of clients.splice(0)) c.close();
    await app?.stop();
  });

  it('answers the message over the limit with the exception event, runs no handler, and keeps the connection', async () => {
    const client = await connect(app.port);
    clients.push(client);
    // one message at a time: Nest sends a handler's answer a tick later than a filter's, so order them here
    for (const text of ['one', 'two', 'three']) {
      const before = client.received.length;
      client.send('alice', text);
      await until(`the answer to ${text}`, () => (client.received.length > before ? true : undefined));
    }
    expect(client.received.slice(0, 2)).toEqual([
      ['chat', 'echo one'],
      ['chat', 'echo two'],
    ]);
    const [event, data] = client.received[2]!;
    expect(event).toBe('exception');
    expect(data).toEqual({
      status: 'error',
      message: 'Rate limit exceeded (sketch LIMIT_60000); retry after 80 s',
      code: 'ERR_SKETCH_THRESHOLD',
      retryAfterSeconds: 80,
      sketchId: 'LIMIT_60000',
    });
    // still open: another user's message on the same connection is answered
    expect(client.connected()).toBe(true);
    client.send('bob', 'hello');
    await until('the fourth answer', () => (client.received.length >= 4 ? true : undefined));
    expect(client.received[3]).toEqual(['chat', 'echo hello']);
    expect(client.received).toHaveLength(4);
  });

  it('hands the handler only the arguments it declares', async () => {
    const client = await connect(app.port);
    clients.push(client);
    client.sendEvent('arity', { user: 'carol', text: 'x' });
    await until('the answer', () => (client.received.length > 0 ? true : undefined));
    expect(client.received).toEqual([['arity', 1]]);
  });

  it('does not log the limited message as an unexpected error, nor the key', async () => {
    const output = app.stdout() + app.stderr();
    expect(output).toContain('Nest application successfully started'); // the logger is on
    expect(output).not.toMatch(/ERROR|SketchThresholdError/);
    expect(output).not.toContain('alice');
  });
});
