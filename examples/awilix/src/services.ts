// The registrations of the awilix example: PROXY injection (the default), each dependency read from the cradle.

export class Clock {
  private ticks = 0;
  now(): number {
    this.ticks += 1;
    return 1_700_000_000_000 + this.ticks;
  }
}

/** Resolved once while the app starts, with the clock it needs. */
export class StartupCheck {
  private readonly clock: Clock;
  constructor({ clock }: { clock: Clock }) {
    this.clock = clock;
  }
  run(): number {
    return this.clock.now();
  }
}

/** Registered, never resolved: the dead binding. */
export class LegacyExporter {
  exportAll(): string {
    return 'exported';
  }
}

export class OrdersRepository {
  list(): Array<{ id: number }> {
    return [{ id: 1 }, { id: 2 }];
  }
  /** Dead code in a live binding: nothing calls it (method depth reports it never-touched). */
  archive(): number {
    return 0;
  }
}

/** Used only once /orders is requested, by the controller built for the request. */
export class OrdersService {
  private readonly repo: OrdersRepository;
  private readonly clock: Clock;
  constructor({ ordersRepository, clock }: { ordersRepository: OrdersRepository; clock: Clock }) {
    this.repo = ordersRepository;
    this.clock = clock;
  }
  list(): { orders: Array<{ id: number }>; at: number } {
    return { orders: this.repo.list(), at: this.clock.now() };
  }
}

export interface Mailer {
  send(to: string): string;
}

/** A factory (asFunction) needed by the reports only. */
export function makeMailer(): Mailer {
  return { send: (to: string) => `mailed ${to}` };
}
