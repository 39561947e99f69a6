/**
 * The in-run reference of bench/checkout: the least a workflow can cost on this machine at this
 * moment. `count` workflows that do nothing but one local activity (bench/temporal-floor/workflows.ts,
 * one workflow task each: the shape of the checkout-confirm workflow) are started and awaited at the
 * given concurrency from this process, on a task queue of their own in the bench's namespace. Answers
 * workflows/s and CPU ms per workflow of the Temporal server and of this process (client + worker).
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';

export interface FloorResult {
  perSecond: number;
  temporalMs: number | null;
  selfMs: number;
}

const here = path.dirname(fileURLToPath(import.meta.url));

export async function temporalFloor(opts: {
  address: string;
  namespace: string;
  count: number;
  concurrency: number;
  temporalCpuMs: () => number | null;
}): Promise<FloorResult> {
  // The bench prints its own figures: the worker's lifecycle lines would bury them.
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Installed already.
  }
  const taskQueue = `bench-floor-${randomUUID().slice(0, 8)}`;
  const connection = await NativeConnection.connect({ address: opts.address });
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue,
    workflowsPath: path.join(here, '../temporal-floor/workflows.ts'),
    activities: { noop: async (n: number) => n },
  });
  const clientConnection = await Connection.connect({ address: opts.address });
  const client = new Client({ connection: clientConnection, namespace: opts.namespace });
  const running = worker.run();
  try {
    for (let i = 0; i < 10; i++) await client.workflow.execute('oneLocalActivity', { taskQueue, workflowId: `${taskQueue}-warm-${i}`, args: [i] });
    const t0 = opts.temporalCpuMs();
    const p0 = process.cpuUsage();
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: opts.concurrency }, async () => {
        while (next < opts.count) {
          const n = next++;
          await client.workflow.execute('oneLocalActivity', { taskQueue, workflowId: `${taskQueue}-${n}`, args: [n] });
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const t1 = opts.temporalCpuMs();
    const p = process.cpuUsage(p0);
    return {
      perSecond: opts.count / seconds,
      temporalMs: t0 === null || t1 === null ? null : (t1 - t0) / opts.count,
      selfMs: (p.user + p.system) / 1000 / opts.count,
    };
  } finally {
    worker.shutdown();
    await running;
    await clientConnection.close();
    await connection.close();
  }
}
