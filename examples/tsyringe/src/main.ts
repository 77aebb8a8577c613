// A tsyringe application behind routing-controllers on Express, the pairing tsyringe users reach for, with the
// ghost detector watching its container. Prints `LISTENING <port>`; its HTTP server listening is "ready".
import 'reflect-metadata';
import { container, injectable, Lifecycle } from 'tsyringe';
import { Get, JsonController, createExpressServer, useContainer } from 'routing-controllers';
import { Subject } from 'rxjs';
import { Clock, LegacyExporter, OrdersService, ReportBuilder, StartupCheck, type Mailer } from './services.js';

container.register<Mailer>('Mailer', { useFactory: () => ({ send: (to: string) => `mailed ${to}` }) });
container.registerInstance('Config', { greeting: 'hello' });
container.register('Exporter', { useClass: LegacyExporter }, { lifecycle: Lifecycle.Singleton });
// a library's class under the application's own token: the library's code, never a candidate
container.register('OrderEvents', { useClass: Subject });

// tsyringe builds a class with constructor parameters only if @injectable() recorded them
@JsonController('/orders')
@injectable()
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}
  @Get('/')
  list(): unknown {
    return this.orders.list();
  }
}

@JsonController('/reports')
@injectable()
export class ReportsController {
  constructor(private readonly reports: ReportBuilder) {}
  @Get('/')
  build(): unknown {
    return { report: this.reports.build() };
  }
}

@JsonController('/identity')
@injectable()
export class IdentityController {
  @Get('/')
  check(): unknown {
    const a = container.resolve(Clock);
    const b = container.resolve(Clock);
    return {
      sameSingleton: a === b,
      instanceOf: a instanceof Clock,
      constructorIsClass: a.constructor === Clock,
      protoIsClassProto: Object.getPrototypeOf(a) === Clock.prototype,
      config: container.resolve<{ greeting: string }>('Config').greeting,
    };
  }
}

useContainer({ get: (cls: never) => container.resolve(cls) });
const app = createExpressServer({ controllers: [OrdersController, ReportsController, IdentityController] });
const startedAt = container.resolve(StartupCheck).run();
const greeting = container.resolve<{ greeting: string }>('Config').greeting;
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  console.log(`STARTED ${greeting} ${startedAt}`);
  console.log(`LISTENING ${typeof address === 'object' && address ? address.port : address}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
