'use strict';
// openapi-generator-cli from the registry (pinned in package.json: a NestJS application context, about 4.6 M
// downloads a month) started as its users start it, `openapi-generator-cli help`, in a scratch folder. Its
// onApplicationBootstrap runs `java -jar <generator>.jar help` and `… completion` to learn the generator's
// commands; no JVM or jar can be had here (the jar comes from Maven Central), so `java` is a stub on PATH that
// answers those two at once, and the jar an empty file where the CLI looks for it. Everything the CLI does in
// Node is its own: the timeline sees the two child processes as its hook's wait.
//   node start.js   (prints the CLI's help and ends)
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const VERSION = '7.25.0';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-cli-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
fs.mkdirSync(path.join(dir, 'versions'));
fs.writeFileSync(path.join(dir, 'versions', `${VERSION}.jar`), '');
fs.writeFileSync(
  path.join(dir, 'openapitools.json'),
  JSON.stringify({ 'generator-cli': { version: VERSION, storageDir: path.join(dir, 'versions') } }),
);
const bin = path.join(dir, 'bin');
fs.mkdirSync(bin);
const commands = [
  ['generate', 'Generate code with the specified generator.'],
  ['help', 'Display help information about openapi-generator'],
  ['list', 'Lists the available generators'],
  ['version', 'Show version information used in tooling'],
];
fs.writeFileSync(
  path.join(bin, 'java'),
  [
    '#!/bin/sh',
    'case "$*" in',
    `  *completion*) printf '${commands.map(([c]) => c).join('\\n')}\\n' ;;`,
    `  *) printf 'usage: openapi-generator-cli <command> [<args>]\\n\\n${commands
      .map(([c, d]) => `    ${c.padEnd(12)}${d}`)
      .join('\\n')}\\n' ;;`,
    'esac',
    '',
  ].join('\n'),
  { mode: 0o755 },
);
process.env.PATH = `${bin}${path.delimiter}${process.env.PATH}`;
// The CLI reads its configuration from PWD.
process.env.PWD = dir;
process.argv = [process.argv[0], 'openapi-generator-cli', 'help'];
require('@openapitools/openapi-generator-cli/main.js');
