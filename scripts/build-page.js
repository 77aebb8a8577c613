'use strict';
// Bundles the report page (src/page) with esbuild into dist/page/: one minified script with cytoscape inside,
// and the stylesheet. src/report-page inlines both into diag-report.html and the actuator's live page, so
// the page needs no network. Run by `npm run build` and the test setup.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const out = path.join(root, 'dist', 'page');

async function buildPage() {
  const esbuild = require('esbuild');
  fs.mkdirSync(out, { recursive: true });
  await esbuild.build({
    entryPoints: [path.join(root, 'src', 'page', 'app.ts')],
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['es2020'],
    platform: 'browser',
    legalComments: 'none',
    outfile: path.join(out, 'bundle.js'),
    logLevel: 'warning',
  });
  fs.copyFileSync(path.join(root, 'src', 'page', 'styles.css'), path.join(out, 'styles.css'));
  const size = fs.statSync(path.join(out, 'bundle.js')).size;
  return size;
}

module.exports = buildPage;

if (require.main === module) {
  buildPage().then(
    (size) => console.log(`report page bundled: dist/page/bundle.js ${(size / 1024).toFixed(0)} KiB`),
    (err) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
