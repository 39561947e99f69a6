/**
 * Prometheus metrics (docs/operations.md "Metrics"): after a purchase, a webhook delivery and a
 * declined renewal, the API's GET /metrics shows request counts and latency by route template and
 * errors by name, and the worker's listener shows activity, delivery, renewal and dunning counts, the
 * outbox gauges and the Temporal SDK's worker series, all with non-zero values. Both refuse a scrape
 * without the METRICS_TOKEN.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installTemporalMetrics, startWorkerMetricsServer, type WorkerMetricsServer } from '../../workers/src/metrics.ts';
import { sellerWithSdk } from '../catalogue/helpers-c.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { declineRenewalNow } from './declined-renewal.ts';
import { GRANT_SCOPES, buy, call, productWith, until, type Seller } from '../grants/helpers.ts';

const SLOW = 240_000;
const TOKEN = `metrics-${randomUUID()}`;

let srv: TestServer;
let workerMetrics: WorkerMetricsServer;
let s: Seller;
let receiver: Server;
const received: string[] = [];

beforeAll(async () => {
  // The SDK's exporter is part of the process's Temporal runtime: installed before the first worker connects.
  const sdkMetricsUrl = await installTemporalMetrics();
  srv = await startTestServer({ env: { METRICS_TOKEN: TOKEN } });
  workerMetrics = await startWorkerMetricsServer(srv.deps, { port: 0, host: '127.0.0.1', sdkMetricsUrl });
  s = await sellerWithSdk(srv, [...GRANT_SCOPES, 'webhooks:read', 'webhooks:write']);
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push(body);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
}, SLOW);

afterAll(async () => {
  for await (const run of srv.deps.temporal.workflow.list({ query: `TaskQueue = "${srv.deps.cfg.TEMPORAL_TASK_QUEUE}" AND ExecutionStatus = "Running"` })) {
    await srv.deps.temporal.workflow.getHandle(run.workflowId, run.runId).terminate('test finished').catch(() => {});
  }
  await workerMetrics?.close();
  await new Promise((r) => receiver?.close(r));
  await srv?.close();
}, SLOW);

async function scrape(url: string): Promise<string> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of one series (name and exact label set as exposed), or null when absent. */
function value(text: string, name: string, labels: Record<string, string> = {}): number | null {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return null;
}

const worker = () => scrape(`http://127.0.0.1:${workerMetrics.port}/metrics`);

describe('metrics', { timeout: SLOW }, () => {
  it('refuses a scrape without the metrics token, on the API and the worker', async () => {
    const api = await fetch(`${srv.url}/metrics`);
    expect(api.status).toBe(401);
    expect(((await api.json()) as { error: string }).error).toBe('Unauthorized');
    const wrong = await fetch(`${srv.url}/metrics`, { headers: { authorization: 'Bearer not-the-token-at-all' } });
    expect(wrong.status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${workerMetrics.port}/metrics`)).status).toBe(401);
  });

  it('exposes request, error, delivery, renewal, dunning, outbox and Temporal SDK series after a purchase, a delivery and a declined renewal', async () => {
    const endpoint = await call(srv.url, s.token, 'POST', '/v1/webhooks/endpoints', {
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      events: ['order.created'],
      format: 'raw',
    });
    expect(endpoint.status).toBe(201);
    const productId = await productWith(srv, s, [], true);
    const p = await buy(srv, s, productId);
    await until(async () => received.some((b) => b.includes(p.orderId)));
    const missing = await call(srv.url, s.token, 'GET', `/v1/orders/${randomUUID()}`);
    expect(missing.status).toBe(404);

    // The buyer's card now declines and the period ends: the renewal is declined and dunning starts.
    await declineRenewalNow(srv, p.customerId, p.subscriptionId!);

    // API: requests and latency by route template (never the raw path), errors by name.
    const api = await scrape(`${srv.url}/metrics`);
    const confirm = { method: 'POST', route: '/v1/checkouts/client/:client_secret/confirm', status_code: '200' };
    expect(value(api, 'emporia_http_requests_total', confirm)).toBeGreaterThanOrEqual(1);
    expect(value(api, 'emporia_http_request_duration_seconds_count', { method: 'POST', route: confirm.route })).toBeGreaterThanOrEqual(1);
    expect(value(api, 'emporia_http_errors_total', { route: '/v1/orders/:id', status_code: '404', error: 'ResourceNotFound' })).toBe(1);
    expect(api).not.toContain(p.orderId);
    expect(value(api, 'emporia_api_process_cpu_seconds_total')).toBeGreaterThan(0);

    // Worker: what the activities did, the outbox, and the Temporal SDK's series.
    const text = await until(async () => {
      const t = await worker();
      return (value(t, 'emporia_dunning_total', { outcome: 'mail' }) ?? 0) > 0 ? t : null;
    });
    expect(value(text, 'emporia_webhook_deliveries_total', { outcome: 'delivered' })).toBeGreaterThanOrEqual(1);
    expect(value(text, 'emporia_subscription_renewals_total', { outcome: 'renewed_declined' })).toBe(1);
    expect(value(text, 'emporia_activity_executions_total', { activity: 'renewAndCharge', outcome: 'completed' })).toBe(1);
    expect(value(text, 'emporia_activity_duration_seconds_count', { activity: 'renewAndCharge' })).toBe(1);
    expect(value(text, 'emporia_outbox_backlog')).not.toBeNull();
    expect(value(text, 'emporia_outbox_oldest_age_seconds')).not.toBeNull();
    const queue = srv.deps.cfg.TEMPORAL_TASK_QUEUE;
    expect(value(text, 'temporal_workflow_task_execution_latency_count', { task_queue: queue })).toBeGreaterThan(0);
    expect(value(text, 'temporal_activity_execution_latency_count', { task_queue: queue, activity_type: 'subscriptionDunningMail' })).toBeGreaterThan(0);
  });
});
