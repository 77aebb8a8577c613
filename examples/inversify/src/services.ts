// The bindings of the InversifyJS example: constructor injection with @inject(), classes, a dynamic value, a
// constant, a service redirection, and the controllers the routes resolve per request. The same source runs on
// InversifyJS 6 and 7.
import { inject, injectable } from 'inversify';

export const MAILER = Symbol('Mailer');
export const CONFIG = 'Config';

@injectable()
export class Clock {
  private ticks = 0;
  now(): number {
    this.ticks += 1;
    return 1_700_000_000_000 + this.ticks;
  }
}

/** Resolved once while the app starts, with the Clock it needs. */
@injectable()
export class StartupCheck {
  constructor(@inject(Clock) private readonly clock: Clock) {}
  run(): number {
    return this.clock.now();
  }
}

/** Bound, never resolved: the dead binding. */
@injectable()
export class LegacyExporter {
  exportAll(): string {
    return 'exported';
  }
}

@injectable()
export class OrdersRepository {
  list(): Array<{ id: number }> {
    return [{ id: 1 }, { id: 2 }];
  }
  /** Dead code in a live binding: nothing calls it (method depth reports it never-touched). */
  archive(): number {
    return 0;
  }
}

@injectable()
export class OrdersService {
  constructor(
    @inject(OrdersRepository) private readonly repo: OrdersRepository,
    @inject(Clock) private readonly clock: Clock,
  ) {}
  list(): { orders: Array<{ id: number }>; at: number } {
    return { orders: this.repo.list(), at: this.clock.now() };
  }
}

export interface Mailer {
  send(to: string): string;
}

@injectable()
export class ReportBuilder {
  constructor(@inject(MAILER) private readonly mailer: Mailer) {}
  build(): string {
    return this.mailer.send('ops@example.com');
  }
}

@injectable()
export class OrdersController {
  constructor(@inject(OrdersService) private readonly orders: OrdersService) {}
  list(): unknown {
    return this.orders.list();
  }
}

@injectable()
export class ReportsController {
  constructor(@inject(ReportBuilder) private readonly reports: ReportBuilder) {}
  build(): unknown {
    return { report: this.reports.build() };
  }
}
