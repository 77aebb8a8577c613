/**
 * Classes from an ESM-only package outside `@nestjs/*` (test/fixtures/packages/esm-only-lib, installed into
 * NestJS 12's node_modules as a real package) are library classes: the bean its module registers is a
 * framework bean, and an application class extending its base is an entry point. An ESM app learns them from
 * the OpenTelemetry loader hook; a CommonJS app that requires the package (require of ESM) from require.cache.
 */
import { startApp, type LoadingCase } from './support/app-process';

// The fixture package lives in NestJS 12's fixture folder; matrix cells do not install it.
const CASES: LoadingCase[] = process.env.DIAG_MATRIX_DIR ? [] : ['nest12-esm', 'nest12-cjs'];

interface Node {
  name: string;
  framework: boolean;
  verdict?: string;
  entryPoints?: string[];
}

describe.each(CASES)('an app using an ESM-only library (%s)', (loading) => {
  let report: { ghostCandidates: { beans: string[] }; graph: { nodes: Node[] } };
  const node = (name: string) => report.graph.nodes.find((n) => n.name === name);

  beforeAll(async () => {
    const app = await startApp(loading, { app: 'esm-lib-app' });
    try {
      report = app.readReport();
    } finally {
      await app.stop('SIGKILL');
    }
  });

  it('lists only the application bean nothing uses', () => {
    expect(report.ghostCandidates.beans).toEqual(['DeadService']);
  });

  it("counts the library module's own bean as a framework bean", () => {
    expect(node('LibCacheService')).toMatchObject({ framework: true });
    expect(node('LibCacheService')!.verdict).toBeUndefined();
  });

  it("keeps a subclass of the library's class off the list as an entry point", () => {
    expect(node('OrdersHandler')).toMatchObject({
      framework: false,
      verdict: 'entry-point',
      entryPoints: ['extends-library-class:LibHandler'],
    });
  });
});
