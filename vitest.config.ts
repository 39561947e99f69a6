import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Temporal workers misbehave under the threads pool.
    pool: 'forks',
    maxWorkers: 2,
    globalSetup: ['tests/global-setup.ts'],
    include: ['tests/**/*.test.ts', 'api/src/**/*.test.ts', 'workflows/src/**/*.test.ts', 'workers/src/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
