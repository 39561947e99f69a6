/** The lint rule that keeps workflow code deterministic actually fires (and the tree is lint-clean). */
import { writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const probe = path.join(root, 'workflows/src/__lint_probe__.ts');
afterAll(() => rmSync(probe, { force: true }));

describe('workflow import rule', () => {
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

  it('finds no problem in the source tree', async () => {
    rmSync(probe, { force: true });
    const eslint = new ESLint({ cwd: root });
    const results = await eslint.lintFiles(['api/src', 'workflows/src', 'workers/src', 'infra/src', 'tests']);
    const errors = results.flatMap((r) => r.messages.filter((m) => m.severity === 2).map((m) => `${path.relative(root, r.filePath)}:${m.line} ${m.ruleId} ${m.message}`));
    expect(errors).toEqual([]);
  }, 120_000);
});
