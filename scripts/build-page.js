'use strict';
// Bundles the report page's browser code (src/ghost/page/browser) with esbuild into dist/ghost/page/browser/:
// one minified script with cytoscape inside, and the stylesheet. src/ghost/page inlines both into
// diag-report.html and the actuator's live page, so the page needs no network. Run by `npm run build` and the
// test setup.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const source = path.join(root, 'src', 'ghost', 'page', 'browser');
const out = path.join(root, 'dist', 'ghost', 'page', 'browser');

async function buildPage() {
  const esbuild = require('esbuild');
  fs.mkdirSync(out, { recursive: true });
  await esbuild.build({
    entryPoints: [path.join(source, 'app.ts')],
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['es2020'],
    platform: 'browser',
    legalComments: 'none',
    outfile: path.join(out, 'bundle.js'),
    logLevel: 'warning',
  });
  fs.copyFileSync(path.join(source, 'styles.css'), path.join(out, 'styles.css'));
  const size = fs.statSync(path.join(out, 'bundle.js')).size;
  return size;
}

module.exports = buildPage;

if (require.main === module) {
  buildPage().then(
    (size) => console.log(`report page bundled: dist/ghost/page/browser/bundle.js ${(size / 1024).toFixed(0)} KiB`),
    (err) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
