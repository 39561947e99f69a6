// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.data/**', '.venv/**', 'api/src/migrations/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', fetch: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflow code must stay deterministic: no Node built-ins, and activities only as types.
    files: ['workflows/src/**/*.ts'],
    ignores: ['workflows/src/**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflows cannot use Node built-ins; do it in an activity.' })),
          patterns: [
            {
              group: ['**/activities/**', '@emporia/workers', '@emporia/workers/**', '**/workers/src/**'],
              allowTypeImports: true,
              message: 'Import activities as types only (import type) and call them through proxyActivities.',
            },
            {
              group: ['@emporia/api', '@emporia/api/**', '**/api/src/**', '@mikro-orm/*', 'minio', 'nodemailer', 'pg'],
              allowTypeImports: true,
              message: 'Workflows cannot touch the database, storage or mail; use an activity.',
            },
          ],
        },
      ],
    },
  },
);
