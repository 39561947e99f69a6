/**
 * Issue #20: no input makes a 5xx, and every response agrees with /openapi.json. A short deterministic
 * Schemathesis run (fixed generation, 3 examples per operation, positive and negative) over every
 * operation, each with the credential it is meant for (tests/fuzz/schemathesis.ts). The long run with
 * the coverage phase (boundary values of every field): bench/fuzz/run.ts.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { fuzzCredentials, runSchemathesis, SCHEMATHESIS, type Credentials } from './schemathesis.ts';

describe.skipIf(!existsSync(SCHEMATHESIS))('Schemathesis over /openapi.json', () => {
  let server: TestServer;
  let creds: Credentials;

  beforeAll(async () => {
    // No worker: workflows a request starts are never needed here, and the run is CPU-bound.
    server = await startTestServer({ worker: false, env: { RATE_LIMIT_ENABLED: 'false' } });
    creds = await fuzzCredentials(server.url);
  });
  afterAll(() => server?.close());

  it('finds no server error and no response that disagrees with the document', { timeout: 270_000 }, async () => {
    const r = await runSchemathesis(server.url, creds, {
      maxExamples: 3,
      seed: 20,
      phases: 'examples,fuzzing',
      workers: 2,
      timeoutMs: 240_000,
    });
    const report =
      `${r.operations} operations, ${r.requests} test cases, ${r.failures} failing, ${r.errors} errored in ${r.seconds.toFixed(0)} s\n` +
      r.failed.join('\n');
    expect(r.operations, r.output.slice(-3000)).toBeGreaterThan(100);
    expect(r.failed, report).toEqual([]);
    expect(r.exitCode, r.output.slice(-3000)).toBe(0);
  });
});
