import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// index.html sits in src/, not in renderer/ itself: the server looks for a built panel at
// ../../renderer/index.html (dist layout) before dist/renderer, and must never find the
// unbuilt page there when it runs from source.
const root = fileURLToPath(new URL('./src/', import.meta.url));

// The panel is served by the admin server at /admin/, so every asset URL carries that base.
export default defineConfig({
  root,
  base: '/admin/',
  // No public/ folder: everything the panel needs is imported and fingerprinted.
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/renderer/', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // The panel is loaded from loopback; a source map helps the admin report bugs.
    sourcemap: true,
    reportCompressedSize: true,
  },
});
