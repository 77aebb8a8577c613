import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { PageData } from './types';
import { writeFileAtomic } from '../../shared/atomic-file';
import { PACKAGE_ROOT } from '../../shared/package-root';

export type { PageData } from './types';

/** The report page beside `diag-report.json`. */
export const REPORT_PAGE_FILE = 'diag-report.html';

/** The bundled page (scripts/build-page.js), read once. */
interface PageAssets {
  readonly script: string;
  readonly style: string;
  /** Content-Security-Policy allowing exactly the inline script and style, and nothing from the network. */
  readonly csp: string;
  /** The same policy as a `<meta>` tag allows it (frame-ancestors only works as a header). */
  readonly metaCsp: string;
}

/**
 * cytoscape injects a one-rule stylesheet unless an element with this id exists; a style the page did not
 * declare would be blocked by the policy, so the page's own stylesheet carries the id and the rule.
 */
const CYTOSCAPE_STYLESHEET_ID = '__________cytoscape_stylesheet';

let assets: PageAssets | undefined;

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * The page's script and style, from `dist/page/` beside this module's package. Throws when the package was
 * built without them (`npm run build` bundles them).
 */
export function pageAssets(dir = assetsDir()): PageAssets {
  if (assets) return assets;
  const script = fs.readFileSync(path.join(dir, 'bundle.js'), 'utf8').replace(/<\/script/gi, '<\\/script');
  const style = fs.readFileSync(path.join(dir, 'styles.css'), 'utf8');
  const directives = [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    `style-src ${sha256(style)}`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ];
  assets = { script, style, csp: [...directives, "frame-ancestors 'none'"].join('; '), metaCsp: directives.join('; ') };
  return assets;
}

/** `browser/` beside the compiled module (`dist/ghost/page/browser`); from the sources (tests), the build's. */
function assetsDir(): string {
  const beside = path.join(__dirname, 'browser');
  return fs.existsSync(path.join(beside, 'bundle.js'))
    ? beside
    : path.join(PACKAGE_ROOT, 'dist', 'ghost', 'page', 'browser');
}

/**
 * JSON for a `<script type="application/json">` block: `<`, `>`, `&` and the line separators escaped, so no
 * bean name can close the block or start markup, whatever it contains.
 */
export function embedJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * One self-contained HTML page: the data as an inert JSON block, the bundled script and style inline, and the
 * same Content-Security-Policy as a meta tag, so the page opened from disk cannot reach the network either.
 */
export function reportPageHtml(data: PageData): string {
  const a = pageAssets();
  const title = `Beans of ${data.report.container.name} — diag-instrumentation`.replace(/[<>&"]/g, '');
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${a.metaCsp}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${title}</title>`,
    `<style id="${CYTOSCAPE_STYLESHEET_ID}">${a.style}</style>`,
    '</head><body>',
    `<script type="application/json" id="diag-data">${embedJson(data)}</script>`,
    `<script>${a.script}</script>`,
    '</body></html>',
    '',
  ].join('\n');
}

/**
 * Writes the page atomically (shared/atomic-file.ts). Returns the error instead of throwing: a page that
 * cannot be written must not disturb the host.
 */
export function writeReportPage(file: string, data: PageData): Error | undefined {
  try {
    const html = reportPageHtml(data);
    writeFileAtomic(file, html);
    return undefined;
  } catch (err) {
    return err as Error;
  }
}
