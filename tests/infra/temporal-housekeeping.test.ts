/**
 * The local Temporal server does not fill up: a run's namespace, with its open runs, is deleted by the
 * next run once the owning process is gone; the footprint benchmarks print counts open and closed runs.
 */
import { describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../../api/src/config.ts';
import {
  createRunNamespace,
  deleteStaleRunNamespaces,
  footprint,
  runNamespaceName,
} from '../../infra/src/temporal-housekeeping.ts';

const cfg = loadConfig();
const DEAD_PID = 2 ** 22 + 12345; // above Linux's pid_max: never a live process

describe('Temporal housekeeping', () => {
  it("deletes a dead run's namespace with its open runs, and keeps a live one", async () => {
    const base = `housekeeping${Date.now()}`;
    const dead = runNamespaceName(base, 'test', DEAD_PID);
    const live = runNamespaceName(base, 'test', process.pid);
    await createRunNamespace(cfg.TEMPORAL_ADDRESS, dead);
    await createRunNamespace(cfg.TEMPORAL_ADDRESS, live);
    const connection = await Connection.connect({ address: cfg.TEMPORAL_ADDRESS });
    try {
      const client = new Client({ connection, namespace: dead });
      // Nobody polls this task queue: the run stays open, as a killed test run's would.
      await client.workflow.start('neverPolled', { taskQueue: `nobody-${base}`, workflowId: `left-behind-${base}` });
      expect(await footprint(cfg.TEMPORAL_ADDRESS, dead)).toMatchObject({ openRuns: 1, closedRuns: 0 });

      expect(await deleteStaleRunNamespaces(cfg.TEMPORAL_ADDRESS, base, 'test')).toEqual([dead]);

      const names = (await connection.workflowService.listNamespaces({ pageSize: 1000 })).namespaces.map((n) => n.namespaceInfo?.name);
      expect(names).toContain(live);
      expect(names).not.toContain(dead);
    } finally {
      await connection.operatorService.deleteNamespace({ namespace: live }).catch(() => {});
      await connection.close();
    }
  });
});
