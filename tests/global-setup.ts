/**
 * Once per test run: start (or reuse) PostgreSQL, the Temporal dev server, the object store and the
 * mail catcher; create a fresh test database with every migration; bundle the workflow code once.
 * Test files then start their own API server and worker (own task queue) against these.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../api/src/config.ts';
import { initOrm, migrate } from '../api/src/kit/db.ts';
import { allEntities } from '../api/src/modules/entities.ts';
import {
  DATA_DIR,
  dropStaleTestDatabases,
  ensureDatabase,
  startBackingServices,
  stopAll,
  type Running,
} from '../infra/src/services.ts';
import { createRunNamespace, deleteNamespace, deleteStaleRunNamespaces, runNamespaceName } from '../infra/src/temporal-housekeeping.ts';
import { bundleWorkflows } from '../workers/src/worker.ts';

let running: Running[] = [];

export default async function setup(_project: TestProject) {
  const base = loadConfig();
  // One migrated template database per run; each test file works on its own copy of it (tests/harness.ts),
  // so files never see each other's rows, outbox events or workflows.
  const dbUrl = new URL(base.DATABASE_URL);
  const dbName = decodeURIComponent(dbUrl.pathname.slice(1));
  dbUrl.pathname = `/${dbName}_test_${process.pid}`;
  process.env.DATABASE_URL_TEST = dbUrl.toString();
  process.env.NODE_ENV = 'test';
  process.env.LOG_LEVEL ??= 'silent';

  running = await startBackingServices(base, process.env, () => {}, { temporalDbFile: null });
  // The run's workflows live in a namespace of its own, deleted at the end with every run in it: a
  // shared dev server does not fill up with test runs (and a killed run's namespace goes next time).
  await deleteStaleRunNamespaces(base.TEMPORAL_ADDRESS, base.TEMPORAL_NAMESPACE, 'test').catch(() => {});
  const namespace = runNamespaceName(base.TEMPORAL_NAMESPACE, 'test');
  await createRunNamespace(base.TEMPORAL_ADDRESS, namespace);
  process.env.TEMPORAL_NAMESPACE = namespace;
  await dropStaleTestDatabases(base.DATABASE_URL, dbName);
  await ensureDatabase(dbUrl.toString(), { recreate: true });
  const orm = await initOrm({ DATABASE_URL: dbUrl.toString(), DATABASE_POOL_MAX: 2 }, allEntities);
  await migrate(orm);
  await orm.close();

  const bundle = await bundleWorkflows();
  const dir = path.join(DATA_DIR, 'test');
  mkdirSync(dir, { recursive: true });
  const codePath = path.join(dir, `workflow-bundle-${process.pid}.js`);
  writeFileSync(codePath, bundle.code);
  process.env.WORKFLOW_BUNDLE_PATH = codePath;

  return async () => {
    await dropStaleTestDatabases(base.DATABASE_URL, dbName, process.pid).catch(() => {});
    rmSync(codePath, { force: true });
    await deleteNamespace(base.TEMPORAL_ADDRESS, namespace).catch(() => {});
    await stopAll(running);
  };
}
