/**
 * Benchmark (not a test): webhook delivery throughput and latency. A worker process (started the
 * production way, on its own task queue and its own database `<database>_bench_webhooks`) delivers N
 * outbox events (default 10,000) to 3 local endpoints. Events are committed in batches of 100 (each
 * commit NOTIFYs the worker, as a busy API's commits do), as fast as possible or at --rate events/s.
 * Prints deliveries per second, commit → receipt p50/p99, and how many deliveries were lost (never
 * received once all were due). Signatures are not verified here (tests do that); asserts nothing.
 *
 *   npx tsx bench/webhooks/run.ts [--events 10000] [--rate 0] [--keep]
 *
 * Needs PostgreSQL and Temporal (`npm start`). Issue #13's target on the 2-core machine: at least
 * 200 deliveries/s and p50 under 500 ms, with 0 lost. Figures: docs/performance.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../../api/src/config.ts';
import { initOrm, migrate } from '../../api/src/kit/db.ts';
import { allEntities } from '../../api/src/modules/entities.ts';
import { sealSecret } from '../../api/src/modules/webhooks/service.ts';
import { outboxDispatcherWorkflowId } from '../../workflows/src/ids.ts';
import { dropDatabase, ensureDatabase } from '../../infra/src/services.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const EVENTS = Number(arg('events') ?? 10_000);
const RATE = Number(arg('rate') ?? 0);
const KEEP = process.argv.includes('--keep');
const BATCH = 100;
const ENDPOINTS = 3;

const base = loadConfig();
const dbUrl = new URL(base.DATABASE_URL);
dbUrl.pathname = `${dbUrl.pathname}_bench_webhooks`;
const DATABASE_URL = dbUrl.toString();
const taskQueue = `bench-webhooks-${randomUUID().slice(0, 8)}`;

await ensureDatabase(DATABASE_URL, { recreate: true });
const orm = await initOrm({ DATABASE_URL, DATABASE_POOL_MAX: 2 }, allEntities);
await migrate(orm);
await orm.close();

// Receivers: record when each (event, endpoint) first arrived.
const received = new Map<string, number>();
let duplicates = 0;
const receivers: http.Server[] = [];
const urls: string[] = [];
for (let i = 0; i < ENDPOINTS; i++) {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      const eventId = (JSON.parse(Buffer.concat(chunks).toString()) as { data: { id: string } }).data.id;
      const key = `${eventId}:${i}`;
      if (received.has(key)) duplicates++;
      else received.set(key, now);
      res.writeHead(202).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receivers.push(server);
  urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
}

const db = new pg.Client({ connectionString: DATABASE_URL });
await db.connect();
const orgId = randomUUID();
await db.query(
  `insert into organizations (id, created_at, name, slug, socials, feature_settings, subscription_settings, metadata)
   values ($1, now(), 'Bench', $2, '[]', '{}', '{}', '{}')`,
  [orgId, `bench-${orgId.slice(0, 8)}`],
);
for (const url of urls) {
  await db.query(
    `insert into webhook_endpoints (id, created_at, organization_id, url, format, secret_sealed, events, enabled)
     values ($1, now(), $2, $3, 'raw', $4, '{customer.created}', true)`,
    [randomUUID(), orgId, url, sealSecret(base, `whsec_${randomUUID()}`)],
  );
}

function startWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL, TEMPORAL_TASK_QUEUE: taskQueue, LOG_LEVEL: 'warn', NODE_ENV: 'development' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start:\n${out.slice(-2000)}`)), 180_000);
    const onData = (d: Buffer) => {
      out = (out + d.toString()).slice(-20_000);
      if (out.includes("state: 'RUNNING'")) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker exited (${code}):\n${out.slice(-2000)}`)));
  });
}
const worker = await startWorker();

// Commit events in batches; remember when each batch committed.
const committedAt = new Map<string, number>();
const started = Date.now();
for (let sent = 0; sent < EVENTS; sent += BATCH) {
  const n = Math.min(BATCH, EVENTS - sent);
  const ids = Array.from({ length: n }, () => randomUUID());
  await db.query(
    `insert into outbox_events (id, created_at, organization_id, type, data)
     select id, now(), $2, 'customer.created', jsonb_build_object('id', id) from unnest($1::uuid[]) as id`,
    [ids, orgId],
  );
  const t = Date.now();
  for (const id of ids) committedAt.set(id, t);
  if (RATE > 0) {
    const due = started + ((sent + n) / RATE) * 1000;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
  }
}
const insertSeconds = (Date.now() - started) / 1000;

const expected = EVENTS * ENDPOINTS;
const deadline = Date.now() + Math.max(120_000, EVENTS * 30);
let last = -1;
let lastChange = Date.now();
while (received.size < expected && Date.now() < deadline && Date.now() - lastChange < 60_000) {
  await new Promise((r) => setTimeout(r, 200));
  if (received.size !== last) {
    last = received.size;
    lastChange = Date.now();
  }
}
const latencies: number[] = [];
let lastReceipt = 0;
for (const [key, at] of received) {
  latencies.push(at - committedAt.get(key.split(':')[0]!)!);
  lastReceipt = Math.max(lastReceipt, at);
}
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
const seconds = (lastReceipt - started) / 1000;
// The receiver answers before the worker records the attempt: give the last batch's record a moment.
let pending: { n: number }[] = [];
for (let i = 0; i < 100; i++) {
  ({ rows: pending } = await db.query(`select count(*)::int as n from webhook_events where succeeded is not true`));
  if (pending[0]!.n === 0) break;
  await new Promise((r) => setTimeout(r, 200));
}
console.log(
  JSON.stringify(
    {
      events: EVENTS,
      endpoints: ENDPOINTS,
      rate: RATE || 'unpaced',
      commit_seconds: Number(insertSeconds.toFixed(1)),
      deliveries: received.size,
      deliveries_per_second: Math.round(received.size / seconds),
      commit_to_receipt_ms: { p50: pct(50), p99: pct(99) },
      lost: expected - received.size,
      duplicates,
      webhook_events_not_succeeded: pending[0]!.n,
      machine: { cores: os.cpus().length, load: os.loadavg().map((l) => Number(l.toFixed(2))) },
    },
    null,
    2,
  ),
);

worker.kill('SIGTERM');
await new Promise((r) => worker.once('exit', r));
const connection = await Connection.connect({ address: base.TEMPORAL_ADDRESS });
await new Client({ connection, namespace: base.TEMPORAL_NAMESPACE })
  .workflow.getHandle(outboxDispatcherWorkflowId(taskQueue))
  .terminate('bench finished')
  .catch(() => {});
await connection.close();
await db.end();
for (const s of receivers) {
  s.closeAllConnections();
  s.close();
}
if (!KEEP) await dropDatabase(DATABASE_URL);
