// The web app's build: served by the service at /app/ (api/http/web-app.ts). Hashed file
// names under assets/ let the service cache them for a year; index.html is never cached.
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/app/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    // Everything comes from the service's own origin (its CSP allows nothing else): no
    // inlined data: assets beyond what img-src allows, no module-preload polyfill inline.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
    chunkSizeWarningLimit: 1200,
  },
});
