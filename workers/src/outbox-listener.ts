/**
 * Relays PostgreSQL NOTIFYs on `outbox_events` (sent by a trigger when an insert commits) to this
 * task queue's outbox dispatcher as `wake` signals, starting the dispatcher if it is not running.
 *
 * Also the safety net of durable workflow starts (api/src/kit/workflow-starts.ts): every
 * `sweepSeconds` it starts the recorded workflow starts of this task queue that the API committed
 * but did not start (the API process died in between).
 */
import pg from 'pg';
import type { Deps } from '@emporia/api/src/deps.ts';
import { signalWithStartWorkflow, startPendingWorkflows } from '@emporia/api/src/kit/workflow-starts.ts';
import { outboxDispatcherRun } from '@emporia/api/src/kit/run-metadata.ts';
import { outboxDispatcherWorkflowId } from '@emporia/workflows/ids';

/**
 * Longest a committed event waits before the dispatcher is woken for it. Each wake-up costs the
 * Temporal server and the worker a signal and a workflow task (about 15 ms of CPU together on the
 * 2-core machine): at 100 ms a busy purchase path spent ~5% of the machine on wake-ups, at 250 ms
 * under 2%, for at most a quarter second more webhook latency.
 */
const WAKE_COALESCE_MS = 250;

/** Pauses between attempts to re-open the LISTEN connection: 0.5 s, doubling up to 5 s. */
const LISTEN_RETRY_MIN_MS = 500;
const LISTEN_RETRY_MAX_MS = 5_000;

export interface OutboxListener {
  stop(): Promise<void>;
}

export async function startOutboxListener(
  deps: Deps,
  taskQueue: string,
  opts: { idleSeconds?: number; sweepSeconds?: number; sweepGraceMs?: number } = {},
): Promise<OutboxListener> {
  let sweeping = false;
  const sweep = async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      const n = await startPendingWorkflows(deps.orm.em.fork(), deps.temporal, taskQueue, { graceMs: opts.sweepGraceMs });
      if (n) deps.log.info({ started: n }, 'started recorded workflows the API had not started');
    } catch (err) {
      deps.log.warn({ err }, 'workflow start sweep failed; retrying on the next tick');
    } finally {
      sweeping = false;
    }
  };
  const sweeper = setInterval(() => void sweep(), (opts.sweepSeconds ?? 10) * 1000);
  sweeper.unref();
  void sweep();

  const wake = () =>
    signalWithStartWorkflow(deps.temporal, {
      workflowType: 'outboxDispatcherWorkflow',
      workflowId: outboxDispatcherWorkflowId(taskQueue),
      taskQueue,
      args: [{ idleSeconds: opts.idleSeconds ?? 30 }],
      signal: 'wake',
      signalArgs: [],
      metadata: outboxDispatcherRun(taskQueue),
    });
  await wake();

  let stopped = false;
  let client: pg.Client | undefined;
  let pending: NodeJS.Timeout | undefined;
  const onNotify = () => {
    // Coalesce the commits of the next WAKE_COALESCE_MS into one wake-up: each wake-up is a signal and a
    // workflow task, and a busy API commits outbox events hundreds of times a second.
    pending ??= setTimeout(() => {
      pending = undefined;
      wake().catch((err: unknown) => deps.log.warn({ err }, 'outbox wake-up failed; the dispatcher will poll'));
    }, WAKE_COALESCE_MS);
  };
  // The LISTEN connection is re-opened whenever it drops (PostgreSQL restarted), with a growing pause
  // between attempts while the database is still away; each new connection wakes the dispatcher once
  // for the commits it could not hear about.
  let retryMs = LISTEN_RETRY_MIN_MS;
  let retry: NodeJS.Timeout | undefined;
  const reconnect = () => {
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, retryMs);
    retryMs = Math.min(retryMs * 2, LISTEN_RETRY_MAX_MS);
  };
  const connect = async (): Promise<boolean> => {
    const c = new pg.Client({ connectionString: deps.cfg.DATABASE_URL });
    c.on('notification', onNotify);
    const lost = (err?: Error) => {
      if (stopped) return;
      if (client === c) {
        client = undefined;
        deps.log.warn({ err }, 'outbox listener connection lost; reconnecting');
      }
      void c.end().catch(() => {}); // ignore: the connection is lost or never opened
      reconnect();
    };
    c.on('error', lost);
    c.on('end', () => lost());
    try {
      await c.connect();
      await c.query('LISTEN outbox_events');
    } catch (err) {
      deps.log.warn({ err }, 'outbox listener could not connect; retrying');
      void c.end().catch(() => {}); // ignore: the connection is lost or never opened
      reconnect();
      return false;
    }
    if (stopped) {
      await c.end().catch(() => {}); // ignore: closing a connection not needed any more
      return false;
    }
    client = c;
    retryMs = LISTEN_RETRY_MIN_MS;
    onNotify();
    return true;
  };
  if (!(await connect())) {
    stopped = true;
    clearInterval(sweeper);
    if (retry) clearTimeout(retry);
    throw new Error('outbox listener: could not LISTEN on outbox_events');
  }
  return {
    async stop() {
      stopped = true;
      clearInterval(sweeper);
      if (pending) clearTimeout(pending);
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => {}); // ignore: stopping; a connection that fails to close is gone anyway
    },
  };
}
