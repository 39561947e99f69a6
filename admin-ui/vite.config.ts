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
      output: {
        // Libraries in two shared chunks (react-admin's modules import each other in cycles and must not
        // be split across resource chunks); each resource's own code loads on first use (React.lazy).
        manualChunks(id) {
          if (!id.includes('node_modules')) return undefined;
          if (/node_modules\/(recharts|d3-|victory-vendor|internmap|@reduxjs|redux|react-redux|immer|reselect|decimal\.js-light)/.test(id)) return 'charts';
          return 'vendor';
        },
      },
      // MUI ships "use client" directives, meaningless in a client-only bundle.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  server: { proxy: { '/v1': api, '/api': api } },
});
