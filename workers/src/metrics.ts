/**
 * Prometheus metrics of the worker (prom-client): activity executions, webhook deliveries by outcome,
 * renewals and dunning outcomes (read from the activities' results by an activity interceptor), the
 * outbox backlog and its age (read from PostgreSQL at scrape time), and the Temporal SDK's own worker
 * metrics (its Rust core exports them on a loopback port; `GET /metrics` appends them). Names and
 * labels: docs/operations.md ("Metrics"). Access as on the API (kit/metrics.ts: METRICS_TOKEN, else
 * loopback only).
 */
import http from 'node:http';
import net from 'node:net';
import type { Context } from '@temporalio/activity';
import { Runtime, type ActivityInterceptorsFactory } from '@temporalio/worker';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Deps } from '@emporia/api/src/deps.ts';
import { runSql } from '@emporia/api/src/modules/events/sql.ts';
import { serveScrape } from '@emporia/api/src/kit/metrics.ts';

/** The worker's series: one registry per process (activities of every worker of the process count here). */
export const workerRegistry = new Registry();
collectDefaultMetrics({ register: workerRegistry, prefix: 'emporia_worker_' });

const activities = new Counter({
  name: 'emporia_activity_executions_total',
  help: 'Activity executions, by activity type and outcome (completed, failed)',
  labelNames: ['activity', 'outcome'] as const,
  registers: [workerRegistry],
});
const activityDuration = new Histogram({
  name: 'emporia_activity_duration_seconds',
  help: 'Activity execution time, by activity type',
  labelNames: ['activity'] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [workerRegistry],
});
const webhookDeliveries = new Counter({
  name: 'emporia_webhook_deliveries_total',
  help: 'Webhook delivery attempts, by outcome (delivered, failed, skipped)',
  labelNames: ['outcome'] as const,
  registers: [workerRegistry],
});
const renewals = new Counter({
  name: 'emporia_subscription_renewals_total',
  help: 'Subscription period ends, by outcome (renewed_paid, renewed_declined, renewed_pending, ended, stale)',
  labelNames: ['outcome'] as const,
  registers: [workerRegistry],
});
const dunning = new Counter({
  name: 'emporia_dunning_total',
  help: 'Dunning steps of past-due subscriptions, by outcome (retry_paid, retry_declined, mail, unpaid)',
  labelNames: ['outcome'] as const,
  registers: [workerRegistry],
});

type Outcome = { outcome?: string; paid?: boolean; delivered?: number; failed?: number } | null | undefined;

/** What an activity's result says about deliveries, renewals and dunning. */
function recordOutcome(activity: string, args: unknown[], result: Outcome): void {
  switch (activity) {
    case 'deliverFirstAttempts':
      if (result?.delivered) webhookDeliveries.inc({ outcome: 'delivered' }, result.delivered);
      if (result?.failed) webhookDeliveries.inc({ outcome: 'failed' }, result.failed);
      break;
    case 'deliverWebhook':
      if (result?.outcome) webhookDeliveries.inc({ outcome: result.outcome });
      break;
    case 'renewAndCharge':
      if (result?.outcome === 'charge') renewals.inc({ outcome: result.paid ? 'renewed_paid' : 'renewed_declined' });
      else if (result?.outcome) renewals.inc({ outcome: result.outcome });
      break;
    case 'renewSubscription':
      if (result?.outcome === 'charge') renewals.inc({ outcome: 'renewed_pending' });
      else if (result?.outcome) renewals.inc({ outcome: result.outcome });
      break;
    case 'chargeSubscriptionOrder':
      // Attempt 0 is the first charge of a cycle (a renewal); later attempts are dunning retries.
      if (Number(args[1]) > 0 && result) dunning.inc({ outcome: result.paid ? 'retry_paid' : 'retry_declined' });
      break;
    case 'subscriptionDunningMail':
      dunning.inc({ outcome: 'mail' });
      break;
    case 'markSubscriptionUnpaid':
      dunning.inc({ outcome: 'unpaid' });
      break;
  }
}

/** Counts every activity execution and reads the outcomes of the delivery and subscription activities. */
export const activityMetricsInterceptor: ActivityInterceptorsFactory = (ctx: Context) => ({
  inbound: {
    async execute(input, next) {
      const activity = ctx.info.activityType;
      const end = activityDuration.startTimer({ activity });
      try {
        const result = await next(input);
        activities.inc({ activity, outcome: 'completed' });
        recordOutcome(activity, input.args, result as Outcome);
        return result;
      } catch (err) {
        activities.inc({ activity, outcome: 'failed' });
        throw err;
      } finally {
        end();
      }
    },
  },
});

/** A free loopback port (for the SDK's exporter, which cannot report the port it bound). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Installs the Temporal runtime with its Prometheus exporter on a loopback port; returns the exporter's
 * URL. Must run before the first worker connection of the process (Runtime.install fails after it).
 */
export async function installTemporalMetrics(): Promise<string> {
  const bindAddress = `127.0.0.1:${await freePort()}`;
  Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress, countersTotalSuffix: true, useSecondsForDurations: true } } } });
  return `http://${bindAddress}/metrics`;
}

/** The outbox's backlog and the age of its oldest undispatched event, read at scrape time. */
function outboxGauges(registry: Registry, deps: Pick<Deps, 'orm'>): void {
  let last: Promise<{ backlog: number; age: number }> | null = null;
  const read = () =>
    (last ??= runSql<{ backlog: string; age: string | null }>(
      deps.orm.em.fork(),
      `select count(*) as backlog, extract(epoch from now() - min(created_at)) as age
       from outbox_events where dispatched_at is null`,
    )
      .then(({ rows }) => ({ backlog: Number(rows[0]?.backlog ?? 0), age: Number(rows[0]?.age ?? 0) }))
      .finally(() => setTimeout(() => (last = null), 0)));
  new Gauge({
    name: 'emporia_outbox_backlog',
    help: 'Outbox events not yet fanned out to webhook events',
    registers: [registry],
    async collect() {
      this.set((await read()).backlog);
    },
  });
  new Gauge({
    name: 'emporia_outbox_oldest_age_seconds',
    help: 'Age of the oldest outbox event not yet fanned out (0 when none)',
    registers: [registry],
    async collect() {
      this.set((await read()).age);
    },
  });
}

export interface WorkerMetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * The worker's `GET /metrics` listener on `port` (0: any free port): the worker registry, the outbox
 * gauges, then the Temporal SDK's series from `sdkMetricsUrl` when given.
 */
export async function startWorkerMetricsServer(
  deps: Pick<Deps, 'orm' | 'cfg' | 'log'>,
  opts: { port: number; host?: string; sdkMetricsUrl?: string },
): Promise<WorkerMetricsServer> {
  const own = new Registry();
  outboxGauges(own, deps);
  const registry = Registry.merge([workerRegistry, own]);
  const sdk = async () => {
    if (!opts.sdkMetricsUrl) return '';
    try {
      const res = await fetch(opts.sdkMetricsUrl);
      return res.ok ? `\n${await res.text()}` : '';
    } catch (err) {
      deps.log.warn({ err }, 'Temporal SDK metrics not readable');
      return '';
    }
  };
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'ResourceNotFound', detail: 'Not found' }));
      return;
    }
    serveScrape(deps.cfg.METRICS_TOKEN, registry, req, res, sdk).catch((err: unknown) => {
      deps.log.error({ err }, 'metrics scrape failed');
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? deps.cfg.HOST, resolve);
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
