// An awilix application on Express with awilix-express, the pairing awilix users reach for, with the ghost
// detector watching its container. Prints `LISTENING <port>`; its HTTP server listening is "ready".
import express from 'express';
import { Lifetime, aliasTo, asClass, asFunction, asValue, createContainer } from 'awilix';
import { GET, controller, route, scopePerRequest } from 'awilix-express';
import { Subject } from 'rxjs';
import { Clock, LegacyExporter, OrdersRepository, OrdersService, StartupCheck, makeMailer, type Mailer } from './services.js';

interface Cradle {
  clock: Clock;
  startupCheck: StartupCheck;
  legacyExporter: LegacyExporter;
  ordersRepository: OrdersRepository;
  ordersService: OrdersService;
  mailer: Mailer;
  config: { greeting: string };
  timeSource: Clock;
  orderEvents: Subject<string>;
}

const container = createContainer<Cradle>();
container.register({
  clock: asClass(Clock).singleton(),
  startupCheck: asClass(StartupCheck),
  legacyExporter: asClass(LegacyExporter, { lifetime: Lifetime.SINGLETON }),
  ordersRepository: asClass(OrdersRepository).singleton(),
  ordersService: asClass(OrdersService).scoped(),
  mailer: asFunction(makeMailer),
  config: asValue({ greeting: 'hello' }),
  // a library's class under the application's own name: the library's code, never a candidate
  orderEvents: asClass<Subject<string>>(Subject),
});
container.register('timeSource', aliasTo('clock'));

// awilix-express builds a controller per request from the request's scope: it is never a registration
@route('/orders')
class OrdersApi {
  private readonly orders: OrdersService;
  constructor({ ordersService }: { ordersService: OrdersService }) {
    this.orders = ordersService;
  }
  @GET()
  list(_req: express.Request, res: express.Response): void {
    res.json(this.orders.list());
  }
}

@route('/reports')
class ReportsApi {
  private readonly mailer: Mailer;
  constructor({ mailer }: { mailer: Mailer }) {
    this.mailer = mailer;
  }
  @GET()
  build(_req: express.Request, res: express.Response): void {
    res.json({ report: this.mailer.send('ops@example.com') });
  }
}

const app = express();
app.use(scopePerRequest(container));
app.use(controller([OrdersApi, ReportsApi]));
app.get('/identity', (_req, res) => {
  const a = container.resolve<Clock>('clock');
  res.json({
    sameSingleton: a === container.cradle.clock,
    instanceOf: a instanceof Clock,
    constructorIsClass: a.constructor === Clock,
    protoIsClassProto: Object.getPrototypeOf(a) === Clock.prototype,
    config: container.resolve<{ greeting: string }>('config').greeting,
  });
});

const startedAt = container.resolve<StartupCheck>('startupCheck').run();
const greeting = container.cradle.config.greeting;
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  console.log(`STARTED ${greeting} ${startedAt}`);
  console.log(`LISTENING ${typeof address === 'object' && address ? address.port : address}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
