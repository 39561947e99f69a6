/** No import cycle among api, workers and workflows (madge with .madgerc, as `npm run lint` runs it). */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import madge from 'madge';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const madgeConfig = JSON.parse(readFileSync(path.join(root, '.madgerc'), 'utf8'));
const scratch = mkdtempSync(path.join(tmpdir(), 'import-graph-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function cycles(dir: string, targets: string[]): Promise<string[][]> {
  const result = await madge(targets.map((t) => path.join(dir, t)), { ...madgeConfig, baseDir: dir });
  return result.circular();
}

describe('import graph', () => {
  it('the check finds a cycle when there is one', async () => {
    writeFileSync(path.join(scratch, 'a.ts'), "import { b } from './b.ts';\nexport const a = () => b;\n");
    writeFileSync(path.join(scratch, 'b.ts'), "import { a } from './a.ts';\nexport const b = () => a;\n");
    expect(await cycles(scratch, ['a.ts'])).toEqual([['a.ts', 'b.ts']]);
  });

  it('api, workers and workflows import each other without a cycle', async () => {
    const found = await cycles(root, ['api/src', 'workers/src', 'workflows/src']);
    expect(found.map((c) => c.join(' > '))).toEqual([]);
  }, 120_000);
});
