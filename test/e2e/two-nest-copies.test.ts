import * as fs from 'node:fs';
import * as path from 'node:path';
import { quietOtelEnv, scriptResult, tempDir } from './support/app-process';

/**
 * One process, two copies of @nestjs/core (a monorepo, or a Nest package that resolves another copy than the
 * application's): the instrumentation patches both, and disable() must undo both. The second copy is the
 * root's own @nestjs/core copied into a temporary node_modules; its dependencies resolve through NODE_PATH.
 */
const root = path.resolve(__dirname, '..', '..');

it('disable() unpatches every copy of @nestjs/core the process loaded, and enable() patches them again', () => {
  const dir = tempDir('two-nest');
  const copy = path.join(dir, 'node_modules', '@nestjs', 'core');
  fs.cpSync(path.join(root, 'node_modules', '@nestjs', 'core'), copy, { recursive: true });
  const script = path.join(dir, 'main.js');
  fs.writeFileSync(
    script,
    `const path = require('node:path');
const cores = ${JSON.stringify([path.join(root, 'node_modules', '@nestjs', 'core'), copy])};
for (const core of cores) require(core);
const copies = cores.map((core) => path.join(core, 'injector', 'injector.js'));
const injectors = copies.map((file) => require(file).Injector);
const wrapped = () => injectors.map((I) => I.prototype.instantiateClass.__wrapped === true);
const instr = globalThis.__diagInstrumentation;
const before = wrapped();
instr.disable();
const disabled = wrapped();
instr.enable();
console.log('RESULT ' + JSON.stringify({ distinct: injectors[0] !== injectors[1], before, disabled, reenabled: wrapped() }));
`,
  );
  const { result } = scriptResult(
    ['--require', path.join(root, 'test', 'fixtures', 'telemetry', 'telemetry.cjs'), script],
    dir,
    {
      ...quietOtelEnv(),
      NODE_PATH: path.join(root, 'node_modules'),
      DIAG_REPORT_DIR: dir,
    },
  );
  expect(result).toEqual({
    distinct: true,
    before: [true, true],
    disabled: [false, false],
    reenabled: [true, true],
  });
}, 40_000);
