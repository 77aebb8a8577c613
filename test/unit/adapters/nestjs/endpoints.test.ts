/**
 * The HTTP routes of the inventory for the settings the end-to-end fixtures do not use, on real NestJS
 * applications created in this process (the inventory reads the container; no module hook is involved): each
 * application listens, and every route of its inventory is called over HTTP and must reach the method named.
 */
import * as http from 'node:http';
import 'reflect-metadata';
import {
  Controller,
  Get,
  Injectable,
  Module,
  Version,
  VersioningType,
  type INestApplication,
  type INestApplicationContext,
  type VersioningOptions,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Parent, Query, ResolveField, ResolveReference, Resolver } from '@nestjs/graphql';
import { MessagePattern, Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { readEndpoints, servedTransports } from '../../../../src/adapters/nestjs/endpoints';
import type { NestContainer, NestInstanceWrapper } from '../../../../src/adapters/nestjs/nest-types';
import { metadataApi } from '../../../../src/shared/reflect-metadata';

@Controller(['a', 'b'])
class PathsController {
  @Get('x')
  x(): string {
    return 'x';
  }
}

@Controller('items')
class ItemsController {
  @Get()
  @Version('2')
  list(): string {
    return 'list';
  }
}

@Controller({ path: 'h', host: 'admin.example.com' })
class HostController {
  @Get()
  h(): string {
    return 'h';
  }
}

@Injectable()
class PlainService {
  run(): number {
    return 1;
  }
}

/** The inventory of `app`'s container; with `built`, marked by what those applications serve (`servedTransports`). */
function inventory(app: INestApplicationContext, built?: readonly INestApplicationContext[]) {
  const container = (app as unknown as { container: NestContainer }).container;
  const names = new Map<NestInstanceWrapper, string>();
  for (const mod of container.getModules().values()) {
    for (const map of [mod.controllers, mod.providers]) {
      for (const w of map?.values() ?? []) if (typeof w.metatype === 'function') names.set(w, w.metatype.name);
    }
  }
  return readEndpoints(container, metadataApi()!, names, new Date(), built && servedTransports(built));
}

const apps: INestApplicationContext[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function served(
  controllers: Function[],
  configure: (app: INestApplication) => void,
): Promise<{ routes: string[]; port: number }> {
  @Module({ controllers: controllers as never[], providers: [PlainService] })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { logger: false });
  apps.push(app);
  configure(app);
  await app.listen(0, '127.0.0.1');
  const port = (app.getHttpServer().address() as { port: number }).port;
  return { routes: inventory(app).map((e) => `${e.route} → ${e.bean}.${e.method}`), port };
}

/** `<status> <body>` of a GET; node:http, as fetch never sends a Host header of its own. */
function status(port: number, path: string, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(`${res.statusCode} ${body}`));
    });
    req.on('error', reject);
  });
}

describe('the inventory of HTTP routes, as served', () => {
  it('URI versioning without a prefix, a default version, a controller with two paths', async () => {
    const versioning: VersioningOptions = { type: VersioningType.URI, prefix: false, defaultVersion: '1' };
    const { routes, port } = await served([PathsController, ItemsController], (app) =>
      app.enableVersioning(versioning),
    );
    expect(routes).toEqual([
      'GET /1/a/x → PathsController.x',
      'GET /1/b/x → PathsController.x',
      'GET /2/items → ItemsController.list',
    ]);
    expect(await status(port, '/1/a/x')).toBe('200 x');
    expect(await status(port, '/1/b/x')).toBe('200 x');
    expect(await status(port, '/2/items')).toBe('200 list');
  });

  it('a global prefix whose exclusion is matched on the path without its version', async () => {
    const { routes, port } = await served([ItemsController, PathsController], (app) => {
      app.setGlobalPrefix('api', { exclude: ['items'] });
      app.enableVersioning({ type: VersioningType.URI });
    });
    expect(routes).toEqual([
      'GET /api/a/x → PathsController.x',
      'GET /api/b/x → PathsController.x',
      'GET /v2/items → ItemsController.list',
    ]);
    expect(await status(port, '/v2/items')).toBe('200 list');
    expect(await status(port, '/api/a/x')).toBe('200 x');
  });

  it('media-type and custom versioning say the version in words', async () => {
    const media = await served([ItemsController], (app) =>
      app.enableVersioning({ type: VersioningType.MEDIA_TYPE, key: 'v=' }),
    );
    expect(media.routes).toEqual(['GET /items (media type v=2) → ItemsController.list']);
    expect(await status(media.port, '/items', { accept: 'application/json;v=2' })).toBe('200 list');

    const custom = await served([ItemsController], (app) =>
      app.enableVersioning({ type: VersioningType.CUSTOM, extractor: () => '2' }),
    );
    expect(custom.routes).toEqual(['GET /items (version 2) → ItemsController.list']);
    expect(await status(custom.port, '/items')).toBe('200 list');
  });

  it('a controller bound to a host says so', async () => {
    const { routes, port } = await served([HostController], () => undefined);
    expect(routes).toEqual(['GET /h (host admin.example.com) → HostController.h']);
    expect(await status(port, '/h', { host: 'admin.example.com' })).toBe('200 h');
    expect((await status(port, '/h')).slice(0, 3)).toBe('404');
  });

  it('an application context serves no HTTP: its controllers have no routes', async () => {
    @Module({ controllers: [ItemsController], providers: [PlainService] })
    class ContextModule {}
    const app = await NestFactory.createApplicationContext(ContextModule, { logger: false });
    apps.push(app);
    expect(inventory(app)).toEqual([]);
  });
});

/** Schema first: a plain method of a root type's resolver resolves a field too, as @nestjs/graphql has it. */
@Resolver('Query')
class RootResolver {
  @Query('renamed')
  named(): string {
    return 'n';
  }

  plain(): string {
    return 'p';
  }
}

@Resolver('User')
class UserResolver {
  @ResolveField('posts')
  postsOf(@Parent() _user: unknown): string[] {
    return [];
  }

  @ResolveReference()
  resolveReference(): unknown {
    return {};
  }

  // not a field: User is no root type
  helper(): void {}
}

@WebSocketGateway()
class Gateway {
  @SubscribeMessage('ping')
  ping(): string {
    return 'pong';
  }
}

@Injectable()
class NotAController {
  // patterns are bound on controllers only: Nest never calls this one
  @MessagePattern('ignored')
  ignored(): void {}
}

@Controller()
class RpcController {
  @MessagePattern({ z: { b: 1, a: 2 }, cmd: 'nested' })
  nested(): void {}
}

/** `@Processor('emails')` of @nestjs/bullmq and `@Processor('mail')` / `@Process('send')` of @nestjs/bull write these. */
@Injectable()
class EmailsProcessor {
  process(): void {}
}
Reflect.defineMetadata('bullmq:processor_metadata', { name: 'emails' }, EmailsProcessor);
@Injectable()
class MailProcessor {
  send(): void {}
}
Reflect.defineMetadata('bull:module_queue', { name: 'mail' }, MailProcessor);
Reflect.defineMetadata('bull:module_queue_process', { name: 'send' }, MailProcessor.prototype.send);

/**
 * Command lines, with the metadata each library writes: nestjs-console's `@Console({ command })` on the class and
 * `@Command({ command })` on the prototype and method's name; nest-commander's `@Command({ name })` on the class,
 * whose `run` its runner calls.
 */
@Injectable()
class CreateUserCli {
  createUser(): void {}
  helper(): void {}
}
Reflect.defineMetadata('nests-console.Console', { command: 'new' }, CreateUserCli);
Reflect.defineMetadata(
  'nests-console.Command:',
  { command: 'user <email> [country]' },
  CreateUserCli.prototype,
  'createUser',
);
@Injectable()
class SeedCommand {
  run(): Promise<void> {
    return Promise.resolve();
  }
}
Reflect.defineMetadata('CommandBuilder:Command:Meta', { name: 'seed [count]' }, SeedCommand);

describe('the inventory of the other handlers, by the rules of the library that calls them', () => {
  it('GraphQL fields, gateway messages, message patterns on controllers only, queue processors', async () => {
    @Module({
      controllers: [RpcController],
      providers: [
        RootResolver,
        UserResolver,
        Gateway,
        NotAController,
        EmailsProcessor,
        MailProcessor,
        CreateUserCli,
        SeedCommand,
      ],
    })
    class HandlersModule {}
    const app = await NestFactory.createApplicationContext(HandlersModule, { logger: false });
    apps.push(app);
    expect(inventory(app).map((e) => `${e.kind} ${e.route} → ${e.bean}.${e.method}`)).toEqual([
      'graphql Query.plain → RootResolver.plain',
      'graphql Query.renamed → RootResolver.named',
      'graphql User.__resolveReference → UserResolver.resolveReference',
      'graphql User.posts → UserResolver.postsOf',
      'rpc {"cmd":"nested","z":{"a":2,"b":1}} → RpcController.nested',
      'ws ping → Gateway.ping',
      'queue emails → EmailsProcessor.process',
      'queue mail:send → MailProcessor.send',
      'command new user → CreateUserCli.createUser',
      'command seed → SeedCommand.run',
    ]);
  });
});

describe('what a process does not serve, by the applications built on the container', () => {
  @Module({ controllers: [ItemsController, RpcController], providers: [PlainService, Gateway, SeedCommand] })
  class MixedModule {}
  const tcp: MicroserviceOptions = { transport: Transport.TCP, options: { host: '127.0.0.1', port: 0 } };
  const listed = (app: INestApplicationContext, built: INestApplicationContext[]) =>
    inventory(app, built).map((e) => `${e.kind} ${e.route}${e.unserved !== undefined ? ` (${e.unserved})` : ''}`);

  it('an HTTP application that connects no microservice serves no pattern; one that does serves them', async () => {
    const app = await NestFactory.create(MixedModule, { logger: false });
    apps.push(app);
    expect(listed(app, [app])).toEqual([
      'http GET /items',
      'rpc {"cmd":"nested","z":{"a":2,"b":1}} (its HTTP application connects no microservice (app.connectMicroservice))',
      'ws ping',
      'command seed (this process runs an HTTP application, not the command line)',
    ]);
    app.connectMicroservice(tcp);
    expect(listed(app, [app])).toEqual([
      'http GET /items',
      'rpc {"cmd":"nested","z":{"a":2,"b":1}}',
      'ws ping',
      'command seed (this process runs an HTTP application, not the command line)',
    ]);
  });

  it('a microservice serves patterns and gateways, no route; an application context none of them', async () => {
    const micro = await NestFactory.createMicroservice(MixedModule, { ...tcp, logger: false });
    apps.push(micro);
    expect(listed(micro, [micro])).toEqual([
      'http GET /items (this process runs a microservice, which serves no HTTP)',
      'rpc {"cmd":"nested","z":{"a":2,"b":1}}',
      'ws ping',
      'command seed (this process runs a microservice, not the command line)',
    ]);
    const context = await NestFactory.createApplicationContext(MixedModule, { logger: false });
    apps.push(context);
    const none = 'this process runs an application context (createApplicationContext), which serves no';
    expect(listed(context, [context])).toEqual([
      `http GET /items (${none} HTTP)`,
      `rpc {"cmd":"nested","z":{"a":2,"b":1}} (${none} microservice transport)`,
      `ws ping (${none} WebSocket gateway)`,
      // a command line runs in an application context
      'command seed',
    ]);
    // No application known: nothing is said to be unserved (and an application context lists no route).
    expect(servedTransports([])).toBeUndefined();
    expect(listed(context, [])).toEqual(['rpc {"cmd":"nested","z":{"a":2,"b":1}}', 'ws ping', 'command seed']);
  });
});
