/**
 * The OAuth2 operations under Schemathesis (tests/fuzz/schemathesis.ts, tag `oauth2` only, more
 * examples than the whole-document gate): no 5xx, and every answer (OAuth errors included) agrees with
 * /openapi.json.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { fuzzCredentials, runSchemathesis, SCHEMATHESIS, type Credentials } from '../fuzz/schemathesis.ts';

describe.skipIf(!existsSync(SCHEMATHESIS))('Schemathesis over the OAuth2 operations', () => {
  let server: TestServer;
  let creds: Credentials;

  beforeAll(async () => {
    server = await startTestServer({ worker: false, env: { RATE_LIMIT_ENABLED: 'false' } });
    creds = await fuzzCredentials(server.url);
  });
  afterAll(() => server?.close());

  it('finds no server error and no response that disagrees with the document', { timeout: 200_000 }, async () => {
    const r = await runSchemathesis(server.url, creds, {
      maxExamples: 20,
      seed: 18,
      phases: 'examples,fuzzing',
      workers: 1,
      timeoutMs: 180_000,
      extraArgs: ['--include-tag', 'oauth2'],
    });
    const report = `${r.operations} operations, ${r.requests} test cases, ${r.failures} failing in ${r.seconds.toFixed(0)} s\n${r.failed.join('\n')}`;
    expect(r.operations, r.output.slice(-3000)).toBeGreaterThanOrEqual(14);
    expect(r.failed, report).toEqual([]);
    expect(r.exitCode, r.output.slice(-3000)).toBe(0);
  });
});
