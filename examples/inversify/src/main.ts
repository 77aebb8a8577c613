// An InversifyJS application on Express, with the ghost detector watching its container: the routes resolve
// their controller from the container per request. Prints `LISTENING <port>`; its HTTP server listening is
// "ready".
import 'reflect-metadata';
import express from 'express';
import { Container } from 'inversify';
import { Subject } from 'rxjs';
import {
  CONFIG,
  Clock,
  LegacyExporter,
  MAILER,
  OrdersController,
  OrdersRepository,
  OrdersService,
  ReportBuilder,
  ReportsController,
  StartupCheck,
  type Mailer,
} from './services.js';

const container = new Container();
container.bind(Clock).toSelf().inSingletonScope();
container.bind(StartupCheck).toSelf();
container.bind(LegacyExporter).toSelf().inSingletonScope();
container.bind(OrdersRepository).toSelf().inSingletonScope();
container.bind(OrdersService).toSelf();
container
  .bind<Mailer>(MAILER)
  .toDynamicValue(() => ({ send: (to: string) => `mailed ${to}` }))
  // the application's own activation handler, set after the binding is added: it runs as before, and the
  // binding's first resolution is still seen
  .onActivation((_context, mailer) => ({ send: (to: string) => `${mailer.send(to)}, signed` }));
container.bind(CONFIG).toConstantValue({ greeting: 'hello' });
container.bind('TimeSource').toService(Clock);
container.bind(ReportBuilder).toSelf();
container.bind(OrdersController).toSelf();
// a library's class under the application's own token: the library's code, never a candidate
container.bind<Subject<string>>('OrderEvents').to(Subject);
container.bind(ReportsController).toSelf();

const app = express();
app.get('/orders', (_req, res) => {
  res.json(container.get(OrdersController).list());
});
app.get('/reports', (_req, res) => {
  res.json(container.get(ReportsController).build());
});
app.get('/identity', (_req, res) => {
  const a = container.get(Clock);
  res.json({
    sameSingleton: a === container.get(Clock),
    instanceOf: a instanceof Clock,
    constructorIsClass: a.constructor === Clock,
    protoIsClassProto: Object.getPrototypeOf(a) === Clock.prototype,
    config: container.get<{ greeting: string }>(CONFIG).greeting,
  });
});

const startedAt = container.get(StartupCheck).run();
const greeting = container.get<{ greeting: string }>(CONFIG).greeting;
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  console.log(`STARTED ${greeting} ${startedAt}`);
  console.log(`LISTENING ${typeof address === 'object' && address ? address.port : address}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
