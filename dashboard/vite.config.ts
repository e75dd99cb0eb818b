import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The web app builds to static files in dist/: index.html plus content-hashed files under assets/, which the
 * API serves (control-plane/src/http/site.ts) and a CDN could. No inline script ends up in index.html (the
 * page's Content-Security-Policy allows none). `npm run dev --workspace dashboard` serves it with hot reload
 * against the API at VITE_API_BASE_URL (default http://localhost:8080).
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [react()],
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
