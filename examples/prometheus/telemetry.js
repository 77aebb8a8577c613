'use strict';
// Preload: `node --require ./telemetry.js app.js`. Starts the OpenTelemetry SDK before NestJS is loaded, so the
// instrumentation can hook @nestjs/core, and serves every metric (the diag.* ones included) on /metrics for
// Prometheus to scrape.
const { NodeSDK } = require('@opentelemetry/sdk-node');
const { PrometheusExporter } = require('@opentelemetry/exporter-prometheus');
// Inside this repository the package refers to itself (build it first: `npm run build`); an application
// that installed it writes the same line.
const { DiagInstrumentation } = require('diag-instrumentation');

const metricsPort = Number(process.env.METRICS_PORT || 9464);
const metricsHost = process.env.METRICS_HOST || '127.0.0.1';

// This example is about metrics; traces go nowhere unless you say where (OTEL_TRACES_EXPORTER=console shows
// the start-up span and one child per bean on stdout, =otlp sends them to a collector).
process.env.OTEL_TRACES_EXPORTER ??= 'none';

const sdk = new NodeSDK({
  serviceName: process.env.OTEL_SERVICE_NAME || 'diag-prometheus-example',
  metricReaders: [
    new PrometheusExporter({ host: metricsHost, port: metricsPort }, (err) => {
      if (err) console.error(`metrics endpoint failed to start: ${err.message}`);
      else console.log(`METRICS http://${metricsHost}:${metricsPort}/metrics`);
    }),
  ],
  instrumentations: [
    // Phase 2 on: per-bean touch state is what makes the fleet-wide "never touched" query possible.
    // Every setting can also come from the environment (DIAG_GHOST_TRACKING_ENABLED, DIAG_REPORT_DIR...).
    new DiagInstrumentation({ ghostTracking: { enabled: true } }),
  ],
});
sdk.start();

const stop = () => {
  sdk.shutdown().finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
