// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

/** The configuration is read once, by the composition root and the entry points, and passed down. */
const onlyRootReadsConfig = {
  group: ['**/config.ts', '**/config'],
  importNames: ['config', 'loadConfig'],
  message: 'Only the entry points (server.ts, workers/src/main.ts, scripts) read the configuration; take `cfg` from deps.',
};
/** A module never imports another module's routes: what both need goes in a service or schemas file. */
const noForeignRoutes = {
  group: ['../*/routes.ts', '../*/routes', '../*/*-routes.ts', '../../*/routes.ts', '../../*/*-routes.ts', '!../../kit/routes.ts'],
  message: "Do not import another module's routes; move what is shared into its service (or schemas).",
};
/** kit/ is the bottom layer: it knows nothing of the modules, auth or the composition root. */
const kitBelowModules = {
  group: ['**/modules/**', '**/auth/**', '**/deps.ts', '**/deps', '@emporia/workers', '@emporia/workers/**'],
  message: 'kit/ sits below the modules: it must not import modules/, auth/ or deps.ts (take what it needs as a parameter).',
};
const restrict = (...patterns) => ({ '@typescript-eslint/no-restricted-imports': ['error', { patterns }] });

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
  {
    files: ['api/src/**/*.ts', 'workers/src/**/*.ts'],
    ignores: ['api/src/server.ts', 'api/src/config.ts', 'api/src/scripts/**', 'workers/src/main.ts', '**/*.test.ts'],
    rules: restrict(onlyRootReadsConfig),
  },
  { files: ['api/src/kit/**/*.ts'], ignores: ['**/*.test.ts'], rules: restrict(onlyRootReadsConfig, kitBelowModules) },
  {
    files: ['api/src/modules/**/*.ts'],
    ignores: ['api/src/modules/routes.ts', '**/*.test.ts'],
    rules: restrict(onlyRootReadsConfig, noForeignRoutes),
  },
);
