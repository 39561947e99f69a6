import { defineConfig } from 'vite';

// In dev, forward API calls to a running Emporia API (same-origin in production).
const api = process.env.EMPORIA_API_URL ?? 'http://localhost:8000';

export default defineConfig({
  // One build serves both /portal/* and /checkout/*; assets always live under /portal/assets/.
  base: '/portal/',
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The checkout entry stays small: the portal and Stripe.js are their own chunks (dynamic imports).
    chunkSizeWarningLimit: 350,
  },
  server: { proxy: { '/v1': api } },
});
