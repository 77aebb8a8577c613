import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { freePort } from '../../support/ports';
import { startApp, type RunningApp } from '../support/app-process';

/**
 * The sketch decorators on a real microservice (test/fixtures/apps/sketch-rpc-app: Nest 11, TCP transport),
 * called through Nest's own TCP client from this process: over the limit the handler is not run and the
 * caller's `send()` fails with an RpcException-shaped error carrying the code and when to retry.
 */
describe('sketch decorators on a microservice (nest11-cjs, TCP)', () => {
  let app: RunningApp;
  let client: ClientProxy;

  beforeAll(async () => {
    const rpcPort = await freePort();
    app = await startApp('nest11-cjs', {
      app: 'sketch-rpc-app',
      env: { SKETCH_RPC_PORT: String(rpcPort), NEST_LOGS: '1' },
    });
    client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port: rpcPort } });
    await client.connect();
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await app?.stop();
  });

  const ask = (account: string) => firstValueFrom(client.send<string>('quota', { account }));

  it('fails the call over the limit with the code and retryAfterSeconds, and answers other keys', async () => {
    expect(await ask('acme')).toBe('quota of acme');
    expect(await ask('acme')).toBe('quota of acme');
    await expect(ask('acme')).rejects.toEqual({
      status: 'error',
      message: 'Rate limit exceeded (sketch LIMIT_60000); retry after 80 s',
      code: 'ERR_SKETCH_THRESHOLD',
      retryAfterSeconds: 80,
      sketchId: 'LIMIT_60000',
    });
    expect(await ask('globex')).toBe('quota of globex');
  });

  it('does not log the limited call as an unexpected error, nor the key', async () => {
    const output = app.stdout() + app.stderr();
    expect(output).toContain('Nest microservice successfully started'); // the logger is on
    expect(output).not.toMatch(/ERROR|SketchThresholdError/);
    expect(output).not.toContain('acme');
  });
});
