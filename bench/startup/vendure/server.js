'use strict';
// Vendure's server as its users start it, on an SQL.js database file (no database server), plus one plugin of
// the application's own (Vendure's hundreds of beans are a library's, so Phase 2 tracks only the plugin's).
// Prints BOOT_MS around bootstrap(), TOTAL_MS from process start to listening, and MODULES.
//   VENDURE_DB=<file> [VENDURE_SYNC=1 to create it] PORT=<port> node server.js
// VENDURE_KEEP_LISTENING=1 keeps it serving until SIGTERM (bench/startup/first-answer.js asks it for an answer).
const { Injectable } = require('@nestjs/common');
const { bootstrap, PluginCommonModule, VendurePlugin, ProductService, ChannelService } = require('@vendure/core');
const { vendureConfig } = require('./config');

const PLUGIN_PROVIDERS = 40;
const providers = [];
// A chain through the plugin's providers that starts at Vendure's ProductService and skips every fourth one, so
// some are injected by nobody (ghost candidates), as in real plugins.
const dependencyOf = (i) =>
  i === 0 ? ProductService : i === 1 ? ChannelService : providers[i % 4 === 1 ? i - 2 : i - 1];
for (let i = 0; i < PLUGIN_PROVIDERS; i++) {
  const dep = dependencyOf(i);
  const cls = {
    [`CatalogTask${i}`]: class {
      constructor(d) {
        this.d = d;
      }
      run() {
        return i;
      }
    },
  }[`CatalogTask${i}`];
  Injectable()(cls);
  Reflect.defineMetadata('design:paramtypes', [dep], cls);
  providers.push(cls);
}
class CatalogPlugin {}
VendurePlugin({ imports: [PluginCommonModule], providers })(CatalogPlugin);

const config = vendureConfig([CatalogPlugin]);

const t0 = performance.now();
bootstrap(config).then(
  async (app) => {
    console.log(`BOOT_MS ${(performance.now() - t0).toFixed(2)}`);
    console.log(`TOTAL_MS ${performance.now().toFixed(2)}`);
    console.log(`MODULES ${Object.keys(require.cache).length}`);
    if (process.env.VENDURE_KEEP_LISTENING === '1') process.once('SIGTERM', () => app.close());
    else await app.close();
  },
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
