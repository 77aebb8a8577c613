'use strict';
// Vendure with its own DefaultSearchPlugin (registered through init(), its resolvers hosted in modules Vendure
// builds at run time) and a plugin of the application's (greeting.plugin.js), for test/e2e/real-apps: the
// application's beans must be the plugin's, the search plugin's the framework's. Prints `LISTENING <port>`;
// Vendure's bootstrap enables Nest's shutdown hooks, so SIGINT closes it.
//   VENDURE_DB=<file> [VENDURE_SYNC=1 to create it] PORT=<port> node plugins-server.js
const { bootstrap, DefaultSearchPlugin } = require('@vendure/core');
const { vendureConfig } = require('./config');
const { GreetingPlugin } = require('./greeting.plugin');

const sync = process.env.VENDURE_SYNC === '1';
bootstrap(vendureConfig([DefaultSearchPlugin.init({}), GreetingPlugin])).then(
  async (app) => {
    if (sync) return app.close();
    console.log(`LISTENING ${process.env.PORT}`);
  },
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
