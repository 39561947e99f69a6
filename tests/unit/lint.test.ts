/**
 * The import rules actually fire (workflow determinism, kit/ below the modules, no module importing
 * another's routes, the configuration read only at the entry points), and the tree is lint-clean.
 */
import { writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const probe = path.join(root, 'workflows/src/__lint_probe__.ts');
const kitProbe = path.join(root, 'api/src/kit/__lint_probe__.ts');
const moduleProbe = path.join(root, 'api/src/modules/products/__lint_probe__.ts');
const nestedProbe = path.join(root, 'api/src/modules/benefits/types/__lint_probe__.ts');
const probes = [probe, kitProbe, moduleProbe, nestedProbe];
afterAll(() => probes.forEach((p) => rmSync(p, { force: true })));

/** Lines of `file` (written with `lines`) that the restricted-imports rule refuses. */
async function refusedLines(file: string, lines: string[]): Promise<number[]> {
  writeFileSync(file, lines.join('\n') + '\n');
  try {
    const [result] = await new ESLint({ cwd: root }).lintFiles([file]);
    return result!.messages.filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports').map((m) => m.line).sort((a, b) => a - b);
  } finally {
    rmSync(file, { force: true });
  }
}

describe('import rules', () => {
  it('refuses Node built-ins and value imports of activities, allows type imports', async () => {
    writeFileSync(
      probe,
      [
        "import { readFileSync } from 'node:fs';",
        "import crypto from 'crypto';",
        "import { createNotificationActivities } from '../../workers/src/activities/notifications.activities.ts';",
        "import type { NotificationActivities } from '../../workers/src/activities/notifications.activities.ts';",
        'export type T = NotificationActivities;',
        'export const x = [readFileSync, crypto, createNotificationActivities];',
      ].join('\n'),
    );
    const eslint = new ESLint({ cwd: root });
    const [result] = await eslint.lintFiles([probe]);
    const restricted = result!.messages.filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports');
    expect(restricted.map((m) => m.line).sort()).toEqual([1, 2, 3]);
  });

  it('keeps kit/ below the modules: no modules/, auth/ or deps.ts, not even as types', async () => {
    const lines = [
      "import { Product } from '../modules/products/entities.ts';",
      "import type { Deps } from '../deps.ts';",
      "import { User } from '../auth/entities.ts';",
      "import { inTransaction } from './db.ts';",
      "import type { Config } from '../config.ts';",
      'export const x = [Product, User, inTransaction] as unknown as [Deps, Config];',
    ];
    expect(await refusedLines(kitProbe, lines)).toEqual([1, 2, 3]);
  });

  it("refuses a module importing another module's routes, allows its own and kit's", async () => {
    const lines = [
      "import { routes as checkoutRoutes } from '../checkouts/routes.ts';",
      "import { portalSubscriptionRoutes } from '../subscriptions/portal-routes.ts';",
      "import { routes } from './routes.ts';",
      "import { route } from '../../kit/routes.ts';",
      "import { Checkout } from '../checkouts/entities.ts';",
      'export const x = [checkoutRoutes, portalSubscriptionRoutes, routes, route, Checkout];',
    ];
    expect(await refusedLines(moduleProbe, lines)).toEqual([1, 2]);
    const nested = [
      "import { routes } from '../../customers/routes.ts';",
      "import { route } from '../../../kit/routes.ts';",
      "import { routes as own } from '../routes.ts';",
      'export const x = [routes, route, own];',
    ];
    expect(await refusedLines(nestedProbe, nested)).toEqual([1]);
  });

  it('lets only the entry points read the configuration (config(), loadConfig())', async () => {
    const lines = [
      "import { config } from '../../config.ts';",
      "import { loadConfig } from '../../config.ts';",
      "import type { Config } from '../../config.ts';",
      'export const x: [unknown, unknown, Config | null] = [config, loadConfig, null];',
    ];
    expect(await refusedLines(moduleProbe, lines)).toEqual([1, 2]);
    const kit = ["import { config } from '../config.ts';", 'export const x = config;'];
    expect(await refusedLines(kitProbe, kit)).toEqual([1]);
  });

  it('finds no problem in the source tree', async () => {
    probes.forEach((p) => rmSync(p, { force: true }));
    const eslint = new ESLint({ cwd: root });
    const results = await eslint.lintFiles(['api/src', 'workflows/src', 'workers/src', 'infra/src', 'tests']);
    const errors = results.flatMap((r) => r.messages.filter((m) => m.severity === 2).map((m) => `${path.relative(root, r.filePath)}:${m.line} ${m.ruleId} ${m.message}`));
    expect(errors).toEqual([]);
  }, 120_000);
});
