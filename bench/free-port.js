'use strict';
// A loopback port nothing listens on right now, for a benchmark's child server (Redis, an application).
const net = require('node:net');

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

module.exports = { freePort };
