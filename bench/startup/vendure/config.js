'use strict';
// The Vendure configuration both servers here start with: an SQL.js file (VENDURE_DB, created with
// VENDURE_SYNC=1), the shop and admin APIs on loopback at PORT, errors only in the log; the plugins differ.
const { DefaultLogger, LogLevel } = require('@vendure/core');

function vendureConfig(plugins) {
  const sync = process.env.VENDURE_SYNC === '1';
  return {
    apiOptions: {
      port: Number(process.env.PORT),
      hostname: '127.0.0.1',
      adminApiPath: 'admin-api',
      shopApiPath: 'shop-api',
    },
    authOptions: { tokenMethod: 'bearer' },
    dbConnectionOptions: {
      type: 'sqljs',
      location: process.env.VENDURE_DB,
      autoSave: sync,
      synchronize: sync,
      logging: false,
    },
    paymentOptions: { paymentMethodHandlers: [] },
    logger: new DefaultLogger({ level: LogLevel.Error }),
    plugins,
  };
}

module.exports = { vendureConfig };
