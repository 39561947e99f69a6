/**
 * A process that loads the local services (the test run's global setup, `npm start`, the benches) ends
 * with the exit code it set: `npm test` must fail when vitest reports failed tests or unhandled errors.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../infra/src/services.ts';

const tsx = path.join(ROOT, 'node_modules', '.bin', 'tsx');

function exitOf(script: string): number | null {
  const out = spawnSync(tsx, ['--eval', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return out.status;
}

describe('exit code of a process that loads the local services', () => {
  it('is the code the process set, not the 0 of the embedded database shutdown hook', () => {
    expect(exitOf(`import('./infra/src/services.ts').then(() => { process.exitCode = 3; });`)).toBe(3);
  });

  it('is 0 when nothing set another one', () => {
    expect(exitOf(`import('./infra/src/services.ts');`)).toBe(0);
  });
});
