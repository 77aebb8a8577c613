import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { scriptResult, tempDir } from './support/app-process';

/** The ghost report's run id: all workers of one cluster primary are one run, other processes each their own. */
it('names a cluster worker by its primary and a standalone process by its pid and start', () => {
  const dir = tempDir('run-id');
  const script = path.join(dir, 'main.js');
  const module = path.resolve(__dirname, '..', '..', 'dist', 'ghost', 'reports', 'ghost-report-file.js');
  fs.writeFileSync(
    script,
    `const cluster = require('node:cluster');
const { defaultRunId } = require(${JSON.stringify(module)});
if (cluster.isPrimary) {
  const worker = cluster.fork();
  worker.on('message', (workerId) => {
    console.log('RESULT ' + JSON.stringify({ workerId, primaryId: defaultRunId(), primary: process.pid, configured: defaultRunId('deploy-42') }));
    worker.kill();
  });
} else {
  process.send(defaultRunId());
}
`,
  );
  const { result } = scriptResult<{ workerId: string; primaryId: string; primary: number; configured: string }>(
    [script],
    dir,
    {},
  );
  expect(result.workerId).toBe(`${os.hostname()}:cluster-${result.primary}`);
  expect(result.primaryId).toMatch(
    new RegExp(`^${os.hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${result.primary}:\\d+$`),
  );
  expect(result.configured).toBe('deploy-42');
}, 40_000);
