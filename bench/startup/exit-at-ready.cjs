'use strict';
// A second preload for bench/startup/coverage.js: once the instrumentation has published the start-up timeline
// (the report's `startup` section, written 100 ms after ready), writes the timeline and one reading of both
// clocks to TIMELINE_OUT and exits normally, so that `--cpu-prof` writes the profile of the same run. Polls every
// 20 ms after a first wait, which the profile shows as idle after ready, outside what is compared.
const fs = require('node:fs');

const out = process.env.TIMELINE_OUT;
if (out) {
  const poll = setInterval(() => {
    const instrumentation = globalThis.__diagInstrumentation;
    const report = instrumentation?.diagReport();
    if (!report?.startup) return;
    clearInterval(poll);
    // The detector's profile (with the container's bean creations), read through its private field: a check of
    // this repository's own, not an API.
    const profile = instrumentation.state.detector.bootProfile();
    // process.hrtime and the profile's timestamps share a clock (CLOCK_MONOTONIC); performance.now() counts from
    // performance.timeOrigin on it.
    const clock = { hrtimeNs: String(process.hrtime.bigint()), now: performance.now() };
    fs.writeFileSync(out, JSON.stringify({ startup: report.startup, profile, clock }));
    process.exit(0);
  }, 20);
}
