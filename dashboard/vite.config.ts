import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);
/** Text the browser fetches as it is: scripts, styles, the icon. Media and fonts are compressed already. */
const COMPRESSIBLE = /\.(js|css|svg|json|txt)$/;

/**
 * Writes a brotli (.br, best quality) and a gzip (.gz, level 9) copy beside every compressible file of the build,
 * once, so the API serves them without compressing per request (control-plane/src/http/site.ts).
 */
function precompress(): Plugin {
  return {
    name: 'petsing-precompress',
    apply: 'build',
    async writeBundle(options, bundle) {
      const dir = options.dir!;
      await Promise.all(
        Object.keys(bundle)
          .filter((file) => COMPRESSIBLE.test(file))
          .map(async (file) => {
            const body = await readFile(join(dir, file));
            await writeFile(join(dir, `${file}.br`), await brotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }));
            await writeFile(join(dir, `${file}.gz`), await gzipped(body, { level: constants.Z_BEST_COMPRESSION }));
          }),
      );
    },
  };
}

/**
 * The web app builds to static files in dist/: index.html plus content-hashed files under assets/ (each with its
 * precompressed .br and .gz), which the API serves (control-plane/src/http/site.ts) and a CDN could. No inline
 * script ends up in index.html (the page's Content-Security-Policy allows none). `npm run dev --workspace
 * dashboard` serves it with hot reload against the API at VITE_API_BASE_URL (default http://localhost:8080).
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [react(), precompress()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    // Everything goes into hashed files: an inlined data: URL would be one more thing for the CSP to allow.
    assetsInlineLimit: 0,
  },
});
