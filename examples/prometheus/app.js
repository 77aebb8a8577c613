'use strict';
// A small NestJS application in plain JavaScript: the decorators are applied as functions, which is what
// TypeScript compiles `@Injectable()` and friends to. GET /users touches three beans; the rest stay untouched,
// and LegacyReportService is a ghost candidate (created at startup, injected by nothing, no entry point).
require('reflect-metadata');
const { Controller, Get, Inject, Injectable, Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');

/** Applies a method decorator the way TypeScript's emitted code does. */
function decorateMethod(decorator, cls, name) {
  const descriptor = Object.getOwnPropertyDescriptor(cls.prototype, name);
  Object.defineProperty(cls.prototype, name, decorator(cls.prototype, name, descriptor) || descriptor);
}

class PriceCalculator {
  total(cents) {
    return cents.reduce((a, b) => a + b, 0);
  }
}
Injectable()(PriceCalculator);

class UsersService {
  constructor(prices) {
    this.prices = prices;
  }
  list() {
    return [{ id: 1, name: 'ada', spent: this.prices.total([250, 1200]) }];
  }
}
Injectable()(UsersService);
Inject(PriceCalculator)(UsersService, undefined, 0);

class UsersController {
  constructor(users) {
    this.users = users;
  }
  list() {
    return this.users.list();
  }
}
Controller('users')(UsersController);
Inject(UsersService)(UsersController, undefined, 0);
decorateMethod(Get(), UsersController, 'list');

class InvoiceService {
  issue() {
    return { invoice: 42 };
  }
}
Injectable()(InvoiceService);

class BillingController {
  constructor(invoices) {
    this.invoices = invoices;
  }
  bill() {
    return this.invoices.issue();
  }
}
Controller('billing')(BillingController);
Inject(InvoiceService)(BillingController, undefined, 0);
decorateMethod(Get(), BillingController, 'bill');

/** The ghost: nothing injects it and nothing calls it. */
class LegacyReportService {
  render() {
    return 'legacy';
  }
}
Injectable()(LegacyReportService);

class UsersModule {}
Module({ controllers: [UsersController], providers: [UsersService, PriceCalculator] })(UsersModule);

class BillingModule {}
Module({ controllers: [BillingController], providers: [InvoiceService] })(BillingModule);

class AppModule {}
Module({ imports: [UsersModule, BillingModule], providers: [LegacyReportService] })(AppModule);

async function main() {
  const app = await NestFactory.create(AppModule, { logger: process.env.NEST_LOGS === '1' ? undefined : false });
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT || 3000), '127.0.0.1');
  const address = app.getHttpServer().address();
  console.log(`LISTENING ${typeof address === 'object' && address ? address.port : address}`);
}

main().catch((err) => {
  console.error('BOOT FAILED', err);
  process.exit(1);
});
