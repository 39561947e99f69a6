import { defineConfig } from 'vite';

// In dev, forward API calls to a running Emporia API (same-origin in production).
const api = process.env.EMPORIA_API_URL ?? 'http://localhost:8000';

export default defineConfig({
  // Served by the API under /dashboard/; react-admin routes live in the URL hash.
  base: '/dashboard/',
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 4000,
    rollupOptions: {
      // MUI ships "use client" directives, meaningless in a client-only bundle.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  server: { proxy: { '/v1': api, '/api': api } },
});
