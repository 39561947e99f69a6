/**
 * Benchmark tool (not a test): where the API's CPU goes per request for one read under autocannon.
 * Starts the API the production way (as bench/reads/run.ts: NODE_ENV=production, LOG_LEVEL=info to a
 * pipe, rate limits on) with a V8 CPU profile on the database `npm run bench:reads -- --keep` left,
 * warms the read, then runs autocannon on it and reads, for that window only: the API's and the
 * PostgreSQL backends' CPU per request (/proc), and the profile's samples attributed to the step they
 * belong to (the nearest frame, from the leaf up, that names a middleware, library or step: see
 * `STEPS`), beside the top functions by self time.
 *
 *   npx tsx bench/reads/profile.ts [--path '/v1/orders/?limit=10' | --read orders-list|orders-id|...]
 *                                  [--duration 8] [--connections 10] [--top 30] [--keep-profile FILE]
 *                                  [--api-root DIR]   (the API of another checkout, e.g. a worktree of
 *                                  the commit before a change: an A/B under the same load)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, copyFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { loadConfig } from '../../api/src/config.ts';
import { deleteNamespace } from '../../infra/src/temporal-housekeeping.ts';
import { arg, freePort, benchNamespace, outputOf } from '../common.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const KEPT_FILE = path.join(ROOT, '.ci/out/bench-reads-kept.json');
const str = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const DURATION = arg('duration', 8);
const CONNECTIONS = arg('connections', 10);
const TOP = arg('top', 30);

/** Which step a frame belongs to: the first rule matching its URL (and function name), from the leaf up. */
const STEPS: [string, (url: string, fn: string) => boolean][] = [
  ['garbage collector', (u, f) => f === '(garbage collector)'],
  ['(program: V8/native outside JS)', (u, f) => f === '(program)'],
  ['request log line (pino)', (u) => /node_modules\/(pino|sonic-boom|fast-redact|quick-format|safe-stable|on-exit-leak)/.test(u) || u.includes('kit/logger')],
  ['zod (params/query parsing)', (u) => u.includes('node_modules/zod/')],
  ['pg: protocol, rows, pool', (u) => /node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-)/.test(u)],
  ['rate limiter', (u) => u.includes('express-rate-limit') || u.includes('kit/rate-limits')],
  ['principal (passport, token cache)', (u) => u.includes('passport') || u.includes('kit/principals') || u.includes('kit/crypto')],
  ['CORS', (u) => u.includes('kit/cors') || u.includes('node_modules/cors/')],
  ['metrics (prom-client)', (u) => u.includes('kit/metrics') || u.includes('prom-client')],
  ['idempotency middleware', (u) => u.includes('modules/idempotency')],
  ['body parser (json, ingest reader)', (u) => /node_modules\/(body-parser|raw-body|type-is|content-type|media-typer|iconv-lite)/.test(u) || u.includes('events/streamed')],
  ['kept items / splice (read-fragments)', (u) => u.includes('kit/read-fragments')],
  ['read-sql (query, sendRawJson)', (u) => u.includes('kit/read-sql')],
  ['read handlers (module read-sql, routes)', (u) => /modules\/(orders|subscriptions|customers|products|benefits)\//.test(u)],
  ['scope (organizations)', (u) => u.includes('modules/organizations')],
  ['route wrapper (kit/routes, validation, input guards)', (u) => u.includes('kit/routes') || u.includes('kit/validation') || u.includes('kit/input-guards') || u.includes('kit/pagination')],
  ['ORM fork + RequestContext', (u) => u.includes('@mikro-orm')],
  ['request id + log middleware (app.ts)', (u) => u.endsWith('api/src/app.ts')],
  ['fast session check', (u) => u.includes('auth/fast-path')],
  ['express response (res.status/type/setHeader)', (u) => /node_modules\/express\/lib\/response|node_modules\/(mime-types|mime-db|content-disposition|send|vary)\//.test(u)],
  ['express router (layer walk, path matching)', (u) => /node_modules\/(router|path-to-regexp|express|finalhandler|parseurl|qs|encodeurl|depd)\//.test(u)],
  ['HTTP out: headers, socket writes', (u) => /node:_http_outgoing|node:_http_server|node:net|node:internal\/stream_base|node:internal\/streams|node:stream/.test(u)],
  ['HTTP in: parser', (u) => /node:_http_common|node:internal\/http/.test(u)],
  ['async hooks / timers / promises', (u) => /node:internal\/(async_hooks|timers|process\/task_queues|async_local_storage)|node:async_hooks/.test(u)],
];

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function backendCpuMs(databaseUrl: string): Promise<number> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    return rows.reduce((s, r) => s + cpuMs(r.pid), 0);
  } finally {
    await db.end();
  }
}

/** Samples between `fromUs` and `toUs` (the profile's monotonic clock), by step and by function. */
function attribute(p: Profile, fromUs: number, toUs: number) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stepOf = new Map<number, string>();
  const stepFor = (id: number): string => {
    const known = stepOf.get(id);
    if (known) return known;
    let step = '';
    for (let cur: number | undefined = id; cur !== undefined && !step; cur = parent.get(cur)) {
      const { url, functionName } = byId.get(cur)!.callFrame;
      step = STEPS.find(([, m]) => m(url, functionName))?.[0] ?? '';
    }
    const leaf = byId.get(id)!.callFrame;
    if (!step) step = leaf.functionName === '(idle)' ? '(idle)' : `other (${leaf.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/\/work\/main\//, '') || leaf.functionName || 'native'})`;
    stepOf.set(id, step);
    return step;
  };
  const steps = new Map<string, number>();
  const fns = new Map<string, number>();
  let t = p.startTime;
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i]!;
    if (t < fromUs || t > toUs) continue;
    const id = p.samples[i]!;
    const dt = p.timeDeltas[i + 1] ?? 0;
    const step = stepFor(id);
    if (step === '(idle)') continue;
    total += dt;
    steps.set(step, (steps.get(step) ?? 0) + dt);
    const f = byId.get(id)!.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/\/work\/main\//, '')}:${f.lineNumber + 1}`;
    fns.set(key, (fns.get(key) ?? 0) + dt);
  }
  return { steps, fns, total };
}

const kept = existsSync(KEPT_FILE) ? (JSON.parse(readFileSync(KEPT_FILE, 'utf8')) as { databaseUrl: string; token: string }) : null;
if (!kept) throw new Error('no kept bench database: run `npm run bench:reads -- --keep` once');
const { token, databaseUrl } = kept;
const cfg = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const auth = { authorization: `Bearer ${token}` };

const READS: Record<string, (base: string) => Promise<string>> = {};
for (const r of ['products', 'customers', 'orders', 'subscriptions', 'benefits']) {
  READS[`${r}-list`] = async () => `/v1/${r}/?limit=10`;
  READS[`${r}-list100`] = async () => `/v1/${r}/?limit=100`;
  READS[`${r}-id`] = async (b) => {
    const res = await fetch(`${b}/v1/${r}/?limit=10`, { headers: auth });
    const body = (await res.json()) as { items: { id: string }[] };
    return `/v1/${r}/${body.items[5]!.id}`;
  };
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'reads-profile-'));
const { namespace } = await benchNamespace(cfg);
let child: ChildProcess | null = null;
try {
  child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', dir, '--import', 'tsx', 'api/src/server.ts'], {
    cwd: path.resolve(str('api-root') ?? ROOT),
    env: {
      ...process.env,
      NODE_ENV: 'production',
      SECRET: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'info',
      DATABASE_URL: databaseUrl,
      TEMPORAL_NAMESPACE: namespace,
      TEMPORAL_TASK_QUEUE: `bench-reads-${randomUUID().slice(0, 8)}`,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: base,
      RATE_LIMIT_ENABLED: 'true',
      API_RATE_LIMIT_PER_MINUTE: '100000000',
      API_RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const proc = child;
  await outputOf(proc, 'api listening', 'api');
  proc.stdout!.removeAllListeners('data');
  proc.stdout!.resume();
  const given = str('path');
  const readName = str('read') ?? 'orders-list';
  const target = given ?? (await READS[readName]!(base));
  console.log(`profile: ${target}, API of ${path.resolve(str('api-root') ?? ROOT)}, ${CONNECTIONS} connections, ${DURATION} s; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  await autocannon({ url: `${base}${target}`, connections: CONNECTIONS, duration: 3, headers: auth }); // warm-up
  const fromUs = Number(process.hrtime.bigint() / 1000n);
  const c0 = cpuMs(proc.pid!);
  const p0 = await backendCpuMs(databaseUrl);
  const r = await autocannon({ url: `${base}${target}`, connections: CONNECTIONS, duration: DURATION, headers: auth });
  const c1 = cpuMs(proc.pid!);
  const p1 = await backendCpuMs(databaseUrl);
  const toUs = Number(process.hrtime.bigint() / 1000n);
  const n = r.requests.total;
  console.log(
    `${n} requests (${r.non2xx} non-2xx), ${r.requests.average.toFixed(0)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms; ` +
      `API CPU ${((c1 - c0) / n).toFixed(3)} ms/request, PostgreSQL CPU ${((p1 - p0) / n).toFixed(3)} ms/request; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  );
  proc.kill('SIGINT');
  await new Promise((res) => proc.once('exit', res));
  child = null;
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('no profile written');
  const keepAs = str('keep-profile');
  if (keepAs) copyFileSync(path.join(dir, file), keepAs);
  const { steps, fns, total } = attribute(JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Profile, fromUs, toUs);
  const perReq = (us: number) => (us / 1000 / n).toFixed(4);
  console.log(`\nsampled busy time ${(total / 1000).toFixed(0)} ms = ${perReq(total)} ms/request (the profiler's own cost included)`);
  console.log(`${'step'.padEnd(58)} ${'ms/req'.padStart(8)} ${'share'.padStart(6)}`);
  for (const [s, us] of [...steps].sort((a, b) => b[1] - a[1])) {
    console.log(`${s.slice(0, 58).padEnd(58)} ${perReq(us).padStart(8)} ${((100 * us) / total).toFixed(1).padStart(5)}%`);
  }
  console.log(`\ntop ${TOP} functions by self time`);
  for (const [f, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    console.log(`${perReq(us).padStart(8)} ${((100 * us) / total).toFixed(1).padStart(5)}%  ${f.slice(0, 110)}`);
  }
} finally {
  if (child) {
    child.kill('SIGKILL');
  }
  await deleteNamespace(cfg.TEMPORAL_ADDRESS, namespace).catch(() => {}); // ignore: a bench namespace left behind is swept by the next run's housekeeping
  rmSync(dir, { recursive: true, force: true });
}
