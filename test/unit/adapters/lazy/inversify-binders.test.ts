/**
 * Who bound an InversifyJS value binding decides whether it is the application's: the first stack frame outside
 * InversifyJS and this package. An integration published under the same scope (@inversifyjs/http-core binds its own
 * `application` while the application builds its server) is a library, not InversifyJS: an outside trial saw that
 * binding as the application's, a ghost candidate it could not delete. Driven with the real InversifyJS and a
 * library on disk under node_modules/@inversifyjs, whose frames are what the adapter reads.
 */
import 'reflect-metadata';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveConfig } from '../../../../src/config/properties';
import { GhostDetector, STARTUP_PUBLISH_DELAY_MS } from '../../../../src/ghost/detector';
import { unwrapMethod, wrapMethod } from '../../../../src/patching/wrap';
import { tempDir } from '../../../support/temp';

const patcher = { wrap: wrapMethod, unwrap: unwrapMethod };

it("a value an @inversifyjs/* integration binds is the library's; one the application binds is its own", async () => {
  const dir = tempDir('inversify-binders');
  const library = path.join(dir, 'node_modules', '@inversifyjs', 'http-fake');
  fs.mkdirSync(library, { recursive: true });
  fs.writeFileSync(
    path.join(library, 'index.js'),
    "exports.build = (container) => { container.bind('application').toConstantValue({ app: true }); };\n",
  );
  const { InversifyObserver } =
    require('../../../../src/adapters/lazy/inversify/container-observer') as typeof import('../../../../src/adapters/lazy/inversify/container-observer');
  const detector = new GhostDetector(resolveConfig({ report: { dir } }));
  const observer = new InversifyObserver(detector);
  observer.patchCore7(
    require(require.resolve('@inversifyjs/core', { paths: [require.resolve('inversify')] })),
    patcher,
    () => '7.0.0',
  );
  try {
    const { Container } = require('inversify') as typeof import('inversify');
    const container = new Container();
    (require(path.join(library, 'index.js')) as { build(c: unknown): void }).build(container);
    container.bind('settings').toConstantValue({ retries: 3 });
    (
      require('../../../../src/adapters/lazy/ready') as typeof import('../../../../src/adapters/lazy/ready')
    ).diagReady();
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'diag-report.json'), 'utf8'));
    const node = (token: string) => report.graph.nodes.find((n: { token: string }) => n.token === token);
    expect(node('application')).toMatchObject({ kind: 'value', framework: true });
    expect(node('settings')).toMatchObject({ kind: 'value', framework: false });
    expect(report.ghostCandidates.beans).not.toContain('application');
  } finally {
    observer.unpatch(patcher);
    await new Promise((resolve) => setTimeout(resolve, STARTUP_PUBLISH_DELAY_MS + 50));
  }
});
