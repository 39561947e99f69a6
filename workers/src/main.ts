/** The worker process: runs every workflow and activity on the configured task queue. */
import { loadConfig, ConfigError } from '@emporia/api/src/config.ts';
import { createDeps, closeDeps } from '@emporia/api/src/deps.ts';
import type { Connection } from '@temporalio/client';
import { ensureSearchAttributes } from '@emporia/api/src/kit/run-metadata.ts';
import { createWorker } from './worker.ts';
import { installTemporalMetrics, startWorkerMetricsServer } from './metrics.ts';
import { startOutboxListener } from './outbox-listener.ts';
import { startCheckoutExpirySweeper } from './checkout-expiry-sweeper.ts';
import { faultsInjected, withProcessorFaultPoints } from './fault-injection.ts';

let cfg;
try {
  cfg = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(78);
  }
  throw err;
}
const deps = await createDeps(cfg, 'worker');
// The platform's search attributes (OrganizationId, CustomerId, ...) on the namespace, when missing
// (idempotent; docs/operations.md). Without them runs still start, with summaries only.
await ensureSearchAttributes(deps.temporal.connection as Connection, cfg.TEMPORAL_NAMESPACE)
  .then((added) => added.length && deps.log.info({ added }, 'registered Temporal search attributes'))
  .catch((err: unknown) => deps.log.warn({ err }, 'Temporal search attributes not registered; runs start without them'));
// EMPORIA_WORKFLOW_BUNDLE: a prebuilt workflow bundle (the tests' crash workers restart in seconds).
const bundle = process.env.EMPORIA_WORKFLOW_BUNDLE;
// WORKER_METRICS_PORT: GET /metrics with the worker's and the Temporal SDK's series (metrics.ts).
const metrics = cfg.WORKER_METRICS_PORT
  ? await startWorkerMetricsServer(deps, { port: cfg.WORKER_METRICS_PORT, sdkMetricsUrl: await installTemporalMetrics() })
  : null;
// Test-only: the crash tests' fault points around the processor's charges and refunds (fault-injection.ts).
if (faultsInjected()) deps.processor = withProcessorFaultPoints(deps.processor);
const worker = await createWorker(deps, {
  ...(bundle ? { workflowBundle: { codePath: bundle } } : {}),
  shutdownGraceMs: cfg.SHUTDOWN_GRACE_SECONDS * 1000,
});
const sweepSeconds = process.env.EMPORIA_WORKFLOW_SWEEP_SECONDS ? Number(process.env.EMPORIA_WORKFLOW_SWEEP_SECONDS) : undefined;
// EMPORIA_DISPATCHER_IDLE_SECONDS: how often the webhook dispatcher looks for work without a wake-up (tests shorten it).
const idleSeconds = process.env.EMPORIA_DISPATCHER_IDLE_SECONDS ? Number(process.env.EMPORIA_DISPATCHER_IDLE_SECONDS) : undefined;
const listener = await startOutboxListener(deps, cfg.TEMPORAL_TASK_QUEUE, { sweepSeconds, idleSeconds });
await startCheckoutExpirySweeper(deps, cfg.TEMPORAL_TASK_QUEUE);
deps.log.info({ taskQueue: cfg.TEMPORAL_TASK_QUEUE, address: cfg.TEMPORAL_ADDRESS }, 'worker started');
// SIGTERM/SIGINT: stop polling, let running activities finish (up to SHUTDOWN_GRACE_SECONDS), then close.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    deps.log.info({ signal }, 'worker shutting down: finishing running activities');
    worker.shutdown();
  });
}
await worker.run();
await listener.stop();
await metrics?.close();
await closeDeps(deps);
deps.log.info('worker stopped');
