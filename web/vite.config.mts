import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The web app. `npm run build` writes it to web/dist, which the service serves outside /api;
 * `npx vite --config web/vite.config.mts` serves it in development and passes /api to the service
 * (VITE_API_TARGET, default http://localhost:3000), so cookies stay on one origin.
 */
const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/',
  publicDir: false,
  // JSX through Vite's own transform (the automatic runtime): no Babel plugin needed.
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: process.env.WEB_OUT_DIR ?? resolve(here, 'dist'),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 800,
    rollupOptions: {
      // Mantine marks its modules "use client" (for React server components); a browser bundle
      // has no use for it, and the warning would bury the build's own output.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  server: {
    host: '127.0.0.1',
    proxy: { '/api': process.env.VITE_API_TARGET ?? 'http://localhost:3000' },
  },
});
