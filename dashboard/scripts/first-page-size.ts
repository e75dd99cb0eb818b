/**
 * The JavaScript the first page loads, gzipped: the entry script and the module preloads that the built
 * index.html names (the start page's own code; later pages load on demand). Exits 1 above the budget.
 * Run after `npm run build:dashboard`: `npm run size:dashboard`. The browser test measures the same on the
 * live page (test/web-app-e2e.test.ts).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET_BYTES = 150 * 1024;
const dist = join(import.meta.dirname, '..', 'dist');
const html = await readFile(join(dist, 'index.html'), 'utf8');
const files = [...html.matchAll(/<(?:script[^>]*\bsrc|link[^>]*rel="modulepreload"[^>]*\bhref)="\/(assets\/[^"]+\.js)"/g)].map((match) => match[1]!);
let total = 0;
for (const file of files) {
  const bytes = await readFile(join(dist, file));
  const gzipped = gzipSync(bytes, { level: 9 }).length;
  total += gzipped;
  console.log(`${file}: ${(bytes.length / 1024).toFixed(1)} KB, ${(gzipped / 1024).toFixed(1)} KB gzipped`);
}
console.log(`first page JavaScript: ${files.length} files, ${(total / 1024).toFixed(1)} KB gzipped (budget ${BUDGET_BYTES / 1024} KB)`);
if (files.length === 0 || total > BUDGET_BYTES) process.exit(1);
