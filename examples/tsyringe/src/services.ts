// The bindings of the tsyringe fixture: one of each shape the issue names (a dead binding, lazily used ones, a
// factory, a value, controllers) and who needs whom.
import { inject, injectable, singleton } from 'tsyringe';

@singleton()
export class Clock {
  private ticks = 0;
  now(): number {
    this.ticks += 1;
    return 1_700_000_000_000 + this.ticks;
  }
}

/** Resolved once while the app starts: it and the Clock it needs are in use before ready. */
@injectable()
export class StartupCheck {
  constructor(private readonly clock: Clock) {}
  run(): number {
    return this.clock.now();
  }
}

/** A singleton nothing ever resolves: the dead binding. */
@singleton()
export class LegacyExporter {
  exportAll(): string {
    return 'exported';
  }
}

@singleton()
export class OrdersRepository {
  list(): Array<{ id: number }> {
    return [{ id: 1 }, { id: 2 }];
  }
  /** Dead code in a live binding: nothing calls it (method depth reports it never-touched). */
  archive(): number {
    return 0;
  }
}

/** Used only once /orders is requested: a candidate at ready, resolved after traffic. */
@injectable()
export class OrdersService {
  constructor(
    private readonly repo: OrdersRepository,
    private readonly clock: Clock,
  ) {}
  list(): { orders: Array<{ id: number }>; at: number } {
    return { orders: this.repo.list(), at: this.clock.now() };
  }
}

export interface Mailer {
  send(to: string): string;
}

/** Built by the factory registered under 'Mailer', needed by the reports only. */
@injectable()
export class ReportBuilder {
  constructor(@inject('Mailer') private readonly mailer: Mailer) {}
  build(): string {
    return this.mailer.send('ops@example.com');
  }
}
