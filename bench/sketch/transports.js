'use strict';
/*
 * Part 3 of bench/sketch/decorators.js: the same limit on a GraphQL query (@nestjs/graphql + Apollo) and on a
 * socket.io message (@nestjs/websockets), each app on Nest 11 in a process of its own:
 *
 *   bare       no limiter
 *   sketch     @SketchLimit on the resolver / the message handler, key from the request / the message
 *   global     SketchModule.forRoot (GraphQL only: Nest runs no global guard on a gateway)
 *   throttler  @nestjs/throttler's guard, made to read those transports as its documentation shows
 *              (getRequestResponse from the GraphQL context; a WebSocket tracker from the message)
 *
 * Both limiters key on `user:<i mod keys>` with the same limit (100 per 60 s), so both track every distinct key
 * and admit every call. Throughput is the load generator's count; memory is the app's after a forced gc.
 */
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const LIMIT = 100;

/** Applies a legacy method decorator by hand, as TypeScript's __decorate does. */
function decorate(cls, name, decorator) {
  const desc = Object.getOwnPropertyDescriptor(cls.prototype, name);
  Object.defineProperty(cls.prototype, name, decorator(cls.prototype, name, desc) || desc);
}

/** A module's decorators applied in plain JS: `applyAll(Cls, 'method', [Get('x'), ...])`, last applied first. */
function applyAll(cls, name, decorators) {
  for (const d of [...decorators].reverse()) decorate(cls, name, (t, k, desc) => d(t, k, desc) || desc);
}

function memoryController() {
  const { Controller, Get } = require('@nestjs/common');
  class Mem {
    mem() {
      global.gc?.();
      global.gc?.();
      return process.memoryUsage();
    }
  }
  applyAll(Mem, 'mem', [Get('mem')]);
  Controller()(Mem);
  return Mem;
}

/** The GraphQL app: `{ hit }` answered by one resolver, the key in the request's `x-key` header. */
function graphqlModule(limiter) {
  const { Module, UseGuards } = require('@nestjs/common');
  const { GraphQLModule, Resolver, Query, Context } = require('@nestjs/graphql');
  const { ApolloDriver } = require('@nestjs/apollo');
  const sketch = require(path.join(root, 'dist', 'sketch'));
  const keyOf = (req) => req.headers['x-key'];

  class HitResolver {
    hit(_ctx) {
      return true;
    }
  }
  const decorators = [Query('hit')];
  const imports = [
    GraphQLModule.forRoot({
      driver: ApolloDriver,
      typeDefs: 'type Query { hit: Boolean! }',
      context: ({ req, res }) => ({ req, res }),
    }),
  ];
  if (limiter === 'sketch') {
    decorators.push(sketch.SketchLimit({ requests: LIMIT, key: (ctx) => keyOf(ctx.req) }));
  } else if (limiter === 'global') {
    imports.push(sketch.SketchModule.forRoot({ limits: { requests: LIMIT }, key: keyOf }));
  } else if (limiter === 'throttler') {
    const { ThrottlerGuard, ThrottlerModule } = require('@nestjs/throttler');
    class GqlThrottlerGuard extends ThrottlerGuard {
      getRequestResponse(context) {
        const ctx = context.getArgByIndex(2);
        return { req: ctx.req, res: ctx.res };
      }
    }
    imports.push(ThrottlerModule.forRoot({ throttlers: [{ ttl: 60_000, limit: LIMIT }], getTracker: keyOf }));
    decorators.push(UseGuards(GqlThrottlerGuard));
  }
  applyAll(HitResolver, 'hit', decorators);
  Context()(HitResolver.prototype, 'hit', 0);
  Resolver('Query')(HitResolver);
  class AppModule {}
  Module({ imports, controllers: [memoryController()], providers: [HitResolver] })(AppModule);
  return AppModule;
}

/** The socket.io app: message `hit` with `{ key }`, acknowledged with `{ ok: true }`. */
function websocketModule(limiter) {
  const { Module, UseGuards } = require('@nestjs/common');
  const { WebSocketGateway, SubscribeMessage, MessageBody } = require('@nestjs/websockets');
  const sketch = require(path.join(root, 'dist', 'sketch'));

  class HitGateway {
    hit(_message) {
      return { ok: true };
    }
  }
  const decorators = [SubscribeMessage('hit')];
  const imports = [];
  if (limiter === 'sketch') {
    decorators.push(sketch.SketchLimit({ requests: LIMIT, key: (message) => message.key }));
  } else if (limiter === 'throttler') {
    const { ThrottlerGuard, ThrottlerModule } = require('@nestjs/throttler');
    // throttler's guard reads an HTTP request and response: on a gateway it is given stand-ins, as its docs do
    class WsThrottlerGuard extends ThrottlerGuard {
      getRequestResponse() {
        return { req: { headers: {} }, res: undefined };
      }
    }
    imports.push(
      ThrottlerModule.forRoot({
        throttlers: [{ ttl: 60_000, limit: LIMIT }],
        setHeaders: false,
        getTracker: (_req, context) => context.switchToWs().getData().key,
      }),
    );
    decorators.push(UseGuards(WsThrottlerGuard));
  } else if (limiter !== 'bare') {
    throw new Error(`no ${limiter} limiter for WebSocket gateways`);
  }
  applyAll(HitGateway, 'hit', decorators);
  MessageBody()(HitGateway.prototype, 'hit', 0);
  WebSocketGateway()(HitGateway);
  class AppModule {}
  Module({ imports, controllers: [memoryController()], providers: [HitGateway] })(AppModule);
  return AppModule;
}

/** Runs in the app process: `kind` is `gql:<limiter>` or `ws:<limiter>`. */
async function serveTransport(kind) {
  require('reflect-metadata');
  const { NestFactory } = require('@nestjs/core');
  const { setLogger } = require(path.join(root, 'dist', 'shared', 'logger.js'));
  setLogger(null);
  const [transport, limiter] = kind.split(':');
  const module = transport === 'gql' ? graphqlModule(limiter) : websocketModule(limiter);
  const app = await NestFactory.create(module, { logger: false });
  await app.listen(0, '127.0.0.1');
  console.log(`LISTENING ${app.getHttpServer().address().port}`);
}

/** `amount` GraphQL queries `{ hit }` over `connections` connections, key i mod `keys` in `x-key`. */
async function loadGraphql(port, { amount, keys, connections }) {
  const autocannon = require('autocannon');
  let n = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/graphql`,
    method: 'POST',
    connections,
    amount,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ hit }' }),
    requests: [
      {
        setupRequest(req) {
          req.headers = { ...req.headers, 'x-key': `user:${n++ % keys}` };
          return req;
        },
      },
    ],
  });
  // total over duration: autocannon's per-second average rounds to whole seconds on a short run
  return {
    rate: result.requests.total / result.duration,
    total: result.requests.total,
    errors: result.non2xx + result.errors,
    seconds: result.duration,
  };
}

/**
 * `amount` socket.io messages over `connections` sockets, each keeping `inFlight` unacknowledged; a message
 * whose ack is not `{ ok: true }` (Nest's exception event instead) counts as an error.
 */
async function loadWebSocket(port, { amount, keys, connections, inFlight = 8 }) {
  const { io } = require('socket.io-client');
  const sockets = await Promise.all(
    Array.from(
      { length: connections },
      () =>
        new Promise((resolve, reject) => {
          const s = io(`http://127.0.0.1:${port}`, { transports: ['websocket'], reconnection: false });
          s.once('connect', () => resolve(s));
          s.once('connect_error', reject);
        }),
    ),
  );
  let sent = 0;
  let done = 0;
  let errors = 0;
  const t0 = process.hrtime.bigint();
  await new Promise((resolve) => {
    const sendOne = (s) => {
      if (sent >= amount) return;
      const i = sent++;
      s.timeout(10_000).emit('hit', { key: `user:${i % keys}` }, (err, ack) => {
        if (err || !ack || ack.ok !== true) errors++;
        if (++done === amount) resolve();
        else sendOne(s);
      });
    };
    for (const s of sockets) for (let j = 0; j < inFlight; j++) sendOne(s);
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  for (const s of sockets) s.close();
  return { rate: amount / seconds, total: amount, errors, seconds };
}

module.exports = { serveTransport, loadGraphql, loadWebSocket };
