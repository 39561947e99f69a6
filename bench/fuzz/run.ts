/**
 * Long fuzz run (not a test; asserts nothing): Schemathesis over every operation of /openapi.json of an
 * API started from this tree on its own database (`<database>_bench_fuzz`) and task queue, with the
 * credential each operation is meant for (tests/fuzz/schemathesis.ts). Prints operations, requests,
 * failures and each failing operation.
 *
 *   npx tsx bench/fuzz/run.ts [--examples 15] [--seed N] [--phases examples,coverage,fuzzing] [--workers 2] [--deterministic] [--duplicates] [--gate] [--echo] [--output file] [-- <schemathesis run options>]
 *
 * A seed alone draws random cases from it (the same seed, the same run); --deterministic: schemathesis'
 * fixed generation (the test's). --duplicates: the coverage phase also repeats query parameters.
 * Options after `--` go to `schemathesis run` as they are (`--include-path-regex '^/v1/products'`, `--continue-on-failure`).
 *
 * Needs PostgreSQL and Temporal (`npm start`) and .venv/bin/schemathesis (`node infra/bootstrap.mjs`).
 * Figures: docs/hardening.md.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../api/src/config.ts';
import { initOrm, migrate } from '../../api/src/kit/db.ts';
import { allEntities } from '../../api/src/modules/entities.ts';
import { DATA_DIR, dropDatabase, ensureDatabase } from '../../infra/src/services.ts';
import { bundleWorkflows } from '../../workers/src/worker.ts';

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const EXAMPLES = Number(arg('examples') ?? 15);
const SEED = arg('seed') === undefined ? undefined : Number(arg('seed'));
const PHASES = arg('phases');
const WORKERS = Number(arg('workers') ?? 2);
const dashes = process.argv.indexOf('--');
const EXTRA = dashes >= 0 ? process.argv.slice(dashes + 1) : [];

const base = loadConfig();
const dbUrl = new URL(base.DATABASE_URL);
dbUrl.pathname = `${dbUrl.pathname}_bench_fuzz`;
const DATABASE_URL = dbUrl.toString();
await ensureDatabase(DATABASE_URL, { recreate: true });
const orm = await initOrm({ DATABASE_URL, DATABASE_POOL_MAX: 2 }, allEntities);
await migrate(orm);
await orm.close();

const dir = path.join(DATA_DIR, 'bench');
mkdirSync(dir, { recursive: true });
const bundlePath = path.join(dir, `fuzz-workflow-bundle-${process.pid}.js`);
writeFileSync(bundlePath, (await bundleWorkflows()).code);
process.env.WORKFLOW_BUNDLE_PATH = bundlePath;
process.env.LOG_LEVEL ??= 'silent';

// After the environment is set: the harness reads it.
const { startTestServer } = await import('../../tests/harness.ts');
const { ALL_CHECKS, CHECKS, fuzzCredentials, runSchemathesis } = await import('../../tests/fuzz/schemathesis.ts');

const server = await startTestServer({ databaseUrl: DATABASE_URL, env: { RATE_LIMIT_ENABLED: 'false' } });
try {
  const creds = await fuzzCredentials(server.url);
  const r = await runSchemathesis(server.url, creds, {
    maxExamples: EXAMPLES,
    seed: SEED,
    deterministic: process.argv.includes('--deterministic'),
    duplicateQueryParameters: process.argv.includes('--duplicates'),
    phases: PHASES,
    workers: WORKERS,
    // Every check, positive_data_acceptance included (business-rule 422s show up there); --gate: the test's.
    checks: process.argv.includes('--gate') ? CHECKS : ALL_CHECKS,
    echo: process.argv.includes('--echo'),
    outputFile: arg('output'),
    extraArgs: EXTRA,
  });
  if (!process.argv.includes('--echo')) console.log(r.output.split('\n').slice(-60).join('\n'));
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model}, node ${process.version}`);
  console.log(
    `schemathesis: ${r.operations} operations, ${r.requests} requests, ${r.failures} failing operations, ` +
      `${r.errors} errored, ${r.seconds.toFixed(0)} s, ${EXAMPLES} examples/operation, seed ${SEED ?? 'random'}, exit ${r.exitCode}`,
  );
  const byCheck = new Map<string, number>();
  for (const f of r.failed) for (const code of f.match(/ST\d+ [^,→]+/g) ?? []) byCheck.set(code.trim(), (byCheck.get(code.trim()) ?? 0) + 1);
  console.log(
    `failing operations per check: ${[...byCheck].map(([k, v]) => `${k}: ${v}`).join('; ') || 'none'}`,
  );
  for (const f of r.failed) console.log(`  ${f}`);
} finally {
  await server.close();
  rmSync(bundlePath, { force: true });
  await dropDatabase(DATABASE_URL).catch(() => {});
}
