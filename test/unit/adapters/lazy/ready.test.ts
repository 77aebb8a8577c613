import * as http from 'node:http';
import * as net from 'node:net';

/**
 * "Ready" for lazy containers, on real servers: the first HTTP server's `listening`, not a plain TCP server's and
 * not one of this package's own; Node's own listen back once ready; diagReady() for processes without HTTP.
 * Each test loads a fresh copy of the module (its state is per process).
 */
type ReadyModule = typeof import('../../../../src/adapters/lazy/ready') &
  Pick<typeof import('../../../../src/shared/own-servers'), 'markOwnServer'>;

/** The readiness module afresh, with the marker of the package's own servers that it reads. */
function freshReady(): ReadyModule {
  let mod!: ReadyModule;
  jest.isolateModules(() => {
    const ready =
      require('../../../../src/adapters/lazy/ready') as typeof import('../../../../src/adapters/lazy/ready');
    const { markOwnServer } =
      require('../../../../src/shared/own-servers') as typeof import('../../../../src/shared/own-servers');
    mod = Object.assign(Object.create(ready) as typeof ready, { markOwnServer });
  });
  return mod;
}

const listen = (server: net.Server): Promise<void> => new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const close = (server: net.Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ready', () => {
  const nodeListen = net.Server.prototype.listen;
  const servers: net.Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map(close));
    net.Server.prototype.listen = nodeListen;
  });

  it("fires on the first HTTP server's listening, not on a TCP server's or the package's own; then gives Node's listen back", async () => {
    const ready = freshReady();
    const causes: string[] = [];
    ready.whenReady((why) => causes.push(why));
    expect(net.Server.prototype.listen).not.toBe(nodeListen);

    const tcp = net.createServer();
    servers.push(tcp);
    await listen(tcp);
    const own = http.createServer();
    ready.markOwnServer(own);
    servers.push(own);
    await listen(own);
    expect(causes).toEqual([]);
    expect(ready.readyCause()).toBeUndefined();

    const app = http.createServer();
    servers.push(app);
    await listen(app);
    expect(causes).toEqual(['listening']);
    expect(net.Server.prototype.listen).toBe(nodeListen);

    // later subscribers are told on the next turn; diagReady() after ready changes nothing
    const late: string[] = [];
    ready.whenReady((why) => late.push(why));
    ready.diagReady();
    await nextTurn();
    expect(late).toEqual(['listening']);
    expect(ready.readyCause()).toBe('listening');
  });

  it('diagReady() makes a process without HTTP ready, once', () => {
    const ready = freshReady();
    const causes: string[] = [];
    ready.whenReady((why) => causes.push(why));
    ready.diagReady();
    ready.diagReady();
    expect(causes).toEqual(['diagReady']);
    expect(net.Server.prototype.listen).toBe(nodeListen);
  });

  it("leaves a listen wrapped over its own in place when it stops watching, and a listener's error never reaches the server", async () => {
    const ready = freshReady();
    ready.whenReady(() => {
      throw new Error('adapter failed');
    });
    const ours = net.Server.prototype.listen;
    const theirs = function (this: net.Server, ...args: unknown[]) {
      return Reflect.apply(ours, this, args) as net.Server;
    } as typeof ours;
    net.Server.prototype.listen = theirs;
    const app = http.createServer();
    servers.push(app);
    await listen(app);
    expect(ready.readyCause()).toBe('listening');
    // another library's wrapper stays; ours beneath it only forwards now
    expect(net.Server.prototype.listen).toBe(theirs);
  });

  it('unsubscribing the last listener before ready stops watching', () => {
    const ready = freshReady();
    const stop = ready.whenReady(() => undefined);
    expect(net.Server.prototype.listen).not.toBe(nodeListen);
    stop();
    expect(net.Server.prototype.listen).toBe(nodeListen);
  });
});
