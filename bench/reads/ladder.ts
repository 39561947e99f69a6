/**
 * Benchmark tool (not a test): the API's fixed cost per request, layer by layer, in one run.
 *
 *   npx tsx bench/reads/ladder.ts [--duration 4] [--connections 10] [--passes 2] [--rungs 0,1,5,11] [--bytes 66384]
 *
 * Each rung is its own process (NODE_ENV=production, LOG_LEVEL=info to a pipe, rate limits on, as
 * bench/reads/run.ts starts the API) answering the same tiny JSON at `GET /v1/ladder/`: rung 0 is bare
 * Express, each next rung adds one more of the real application's layers in the order `createApp`
 * mounts them (the same functions, not copies), and the last two are the real `createApp` with that
 * route added by its `configure` hook (behind the router mount, helmet-free page headers, the CSRF
 * check), served through Express alone and then through `requestListener` (the fast paths) as the API
 * serves it. Rung 12 is that served app whose route also runs one prepared `select 1` through the
 * API's pool (`kit/read-sql.ts` `query`) and answers `--bytes` bytes of JSON kept in memory through
 * `sendRawJson`, as a read of kept items does: the ceiling of any read of that size that goes to
 * PostgreSQL once, through every layer a read passes; rung 13 is bare Express with rung 12's route,
 * so 12 − 13 is what the layers cost at that body size. Rungs are started together and measured alternately, `--passes` times each; for every
 * rung: req/s and p99 at `--connections`, the rung process's CPU ms per request (/proc), and, from
 * one request: the number of response headers, their bytes, the body's bytes, and the socket writes
 * per response (counted inside the rung process).
 *
 * Requests carry the bench database's organization token (`npm run bench:reads -- --keep`), so the
 * authenticate rung resolves a real organization token (from the principal cache after the first).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SELF = fileURLToPath(import.meta.url);

const RUNGS = [
  'bare Express',
  '+ request id + log line',
  '+ metrics (prom-client)',
  '+ CORS',
  '+ request context / lazy em',
  '+ JSON body reader',
  '+ passport.initialize',
  '+ authenticate (organization token)',
  '+ rate limits',
  '+ idempotency',
  'createApp (router mount, CSRF check, …)',
  'createApp + requestListener (as served)',
  'as served + one prepared select 1 + a body of --bytes',
  'bare Express + the same select 1 and body as rung 12',
] as const;

const DOC = { items: [{ id: '00000000-0000-4000-8000-000000000000', name: 'ladder' }], pagination: { total_count: 1, max_page: 1 } };

async function serve(rung: number): Promise<void> {
  // Socket writes per response: every write of a net.Socket goes through _writeGeneric (write and writev).
  let writes = 0;
  let responses = 0;
  const proto = net.Socket.prototype as unknown as { _writeGeneric: (...a: unknown[]) => unknown };
  const writeGeneric = proto._writeGeneric;
  proto._writeGeneric = function (this: net.Socket, ...a: unknown[]) {
    writes++;
    return writeGeneric.apply(this, a);
  };
  const express = (await import('express')).default;
  const { loadConfig } = await import('../../api/src/config.ts');
  const { createDeps } = await import('../../api/src/deps.ts');
  const appModule = await import('../../api/src/app.ts');
  const { mountMetrics } = await import('../../api/src/kit/metrics.ts');
  const { publicCors } = await import('../../api/src/kit/cors.ts');
  const { authenticate } = await import('../../api/src/kit/principals.ts');
  const { apiRateLimits } = await import('../../api/src/kit/rate-limits.ts');
  const { idempotencyKeys } = await import('../../api/src/modules/idempotency/middleware.ts');
  const passport = (await import('passport')).default;
  const cfg = loadConfig();
  const deps = await createDeps(cfg, 'api');
  const answer = (_req: unknown, res: import('express').Response) => {
    responses++;
    res.json(DOC);
  };
  const { query, RawJson, sendRawJson } = await import('../../api/src/kit/read-sql.ts');
  const text = JSON.stringify(DOC);
  const bytes = Math.max(text.length, Number(process.env.LADDER_BYTES) || 0);
  const body = Buffer.from(bytes > text.length ? `{"items":[{"pad":"${'x'.repeat(bytes - 22)}"}]}` : text);
  const answerPg = (req: import('express').Request, res: import('express').Response, next: (err: unknown) => void) => {
    responses++;
    query(deps.orm.em, 'select 1 as one', []).then(() => sendRawJson(req, res, 200, new RawJson([body])), next);
  };
  let listener: http.RequestListener;
  if (rung >= 10 && rung <= 12) {
    const app = appModule.createApp(deps, (a) => a.get('/v1/ladder/', rung === 12 ? answerPg : answer));
    listener = rung >= 11 ? appModule.requestListener(deps, app) : (app as unknown as http.RequestListener);
  } else {
    const app = express();
    app.disable('x-powered-by');
    app.set('etag', false);
    app.set('trust proxy', cfg.TRUST_PROXY);
    // Rung 13 is rung 0 with rung 12's route: the layers' share of rung 12 at its body size is 12 − 13.
    const layers = rung === 13 ? 0 : rung;
    if (layers >= 1) app.use(appModule.requestLog(deps));
    if (layers >= 2) mountMetrics(app, deps);
    if (layers >= 3) app.use(publicCors());
    if (layers >= 4) app.use(appModule.requestContext(deps));
    if (layers >= 5) app.use(appModule.jsonBody(deps));
    if (layers >= 6) app.use(passport.initialize());
    const api = express.Router();
    if (layers >= 7) api.use(authenticate());
    if (layers >= 8) api.use('/v1', apiRateLimits(cfg));
    if (layers >= 9) api.use('/v1', idempotencyKeys(deps));
    api.get('/v1/ladder/', rung === 13 ? answerPg : answer);
    app.use(api);
    listener = app as unknown as http.RequestListener;
  }
  const server = http.createServer({ maxHeaderSize: 64 * 1024 }, (req, res) => {
    if (req.url === '/__ladder') {
      res.end(JSON.stringify({ writes, responses }));
      return;
    }
    listener(req, res);
  });
  server.keepAliveTimeout = 5_000;
  server.listen(cfg.PORT, '127.0.0.1', () => console.log('ladder listening'));
  process.once('SIGTERM', () => process.exit(0));
}

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function drive(): Promise<void> {
  const autocannon = (await import('autocannon')).default;
  const { loadConfig } = await import('../../api/src/config.ts');
  const { deleteNamespace } = await import('../../infra/src/temporal-housekeeping.ts');
  const { arg, freePort, benchNamespace, outputOf } = await import('../common.ts');
  const DURATION = arg('duration', 4);
  const CONNECTIONS = arg('connections', 10);
  const PASSES = arg('passes', 2);
  const i = process.argv.indexOf('--rungs');
  const chosen = i >= 0 ? process.argv[i + 1]!.split(',').map(Number) : RUNGS.map((_, n) => n);
  const keptFile = path.join(ROOT, '.ci/out/bench-reads-kept.json');
  if (!existsSync(keptFile)) throw new Error('no kept bench database: run `npm run bench:reads -- --keep` once');
  const { token, databaseUrl } = JSON.parse(readFileSync(keptFile, 'utf8')) as { databaseUrl: string; token: string };
  const cfg = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
  const { namespace } = await benchNamespace(cfg);
  const headers = { authorization: `Bearer ${token}` };
  const children: { rung: number; port: number; proc: ChildProcess }[] = [];
  try {
    for (const rung of chosen) {
      const port = await freePort();
      const proc = spawn(process.execPath, ['--import', 'tsx', SELF], {
        cwd: ROOT,
        env: {
          ...process.env,
          LADDER_RUNG: String(rung),
          LADDER_BYTES: String(arg('bytes', 0)),
          NODE_ENV: 'production',
          SECRET: randomBytes(32).toString('hex'),
          LOG_LEVEL: 'info',
          DATABASE_URL: databaseUrl,
          TEMPORAL_NAMESPACE: namespace,
          TEMPORAL_TASK_QUEUE: `bench-ladder-${randomUUID().slice(0, 8)}`,
          PORT: String(port),
          HOST: '127.0.0.1',
          PUBLIC_URL: `http://127.0.0.1:${port}`,
          RATE_LIMIT_ENABLED: 'true',
          API_RATE_LIMIT_PER_MINUTE: '100000000',
          API_RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000000',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      await outputOf(proc, 'ladder listening', `rung ${rung}`);
      proc.stdout!.removeAllListeners('data');
      proc.stdout!.resume();
      proc.stderr!.removeAllListeners('data');
      proc.stderr!.resume();
      children.push({ rung, port, proc });
    }
    // One request each: status, headers and their bytes, body bytes; then a warm-up.
    const shape = new Map<number, { status: number; headers: number; headerBytes: number; bodyBytes: number; names: string }>();
    for (const c of children) {
      shape.set(
        c.rung,
        await new Promise((resolve, reject) => {
          http
            .get({ host: '127.0.0.1', port: c.port, path: '/v1/ladder/', headers }, (res) => {
              let body = 0;
              res.on('data', (d: Buffer) => (body += d.length));
              res.on('end', () => {
                const raw = res.rawHeaders;
                let bytes = `HTTP/1.1 ${res.statusCode} ${res.statusMessage}\r\n`.length + 2;
                for (let k = 0; k < raw.length; k += 2) bytes += raw[k]!.length + 2 + raw[k + 1]!.length + 2;
                const names = [];
                for (let k = 0; k < raw.length; k += 2) names.push(raw[k]!.toLowerCase());
                resolve({ status: res.statusCode!, headers: raw.length / 2, headerBytes: bytes, bodyBytes: body, names: names.join(' ') });
              });
            })
            .on('error', reject);
        }),
      );
      await autocannon({ url: `http://127.0.0.1:${c.port}/v1/ladder/`, connections: CONNECTIONS, duration: 1, headers });
    }
    const results = new Map<number, { rps: number; p99: number; cpu: number; writes: number }[]>();
    for (let pass = 1; pass <= PASSES; pass++) {
      const order = pass % 2 ? children : [...children].reverse();
      for (const c of order) {
        const before = (await (await fetch(`http://127.0.0.1:${c.port}/__ladder`)).json()) as { writes: number; responses: number };
        const c0 = cpuMs(c.proc.pid!);
        const r = await autocannon({ url: `http://127.0.0.1:${c.port}/v1/ladder/`, connections: CONNECTIONS, duration: DURATION, headers });
        const c1 = cpuMs(c.proc.pid!);
        const after = (await (await fetch(`http://127.0.0.1:${c.port}/__ladder`)).json()) as { writes: number; responses: number };
        const n = r.requests.total || 1;
        const list = results.get(c.rung) ?? [];
        list.push({
          rps: r.requests.average,
          p99: r.latency.p99,
          cpu: (c1 - c0) / n,
          // The /__ladder request itself writes once.
          writes: (after.writes - before.writes - 1) / Math.max(1, after.responses - before.responses),
        });
        results.set(c.rung, list);
      }
    }
    console.log(`ladder: ${CONNECTIONS} connections, ${DURATION} s per rung and pass, ${PASSES} passes; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; ${new Date().toISOString()}`);
    console.log('| rung | req/s per pass | p99 ms | API CPU ms/request per pass | × bare (req/s, best pass) | status | headers | header bytes | body bytes | socket writes per response |');
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    const bare = Math.max(...(results.get(chosen[0]!) ?? []).map((x) => x.rps));
    for (const c of children) {
      const rs = results.get(c.rung)!;
      const s = shape.get(c.rung)!;
      const best = Math.max(...rs.map((x) => x.rps));
      console.log(
        `| ${c.rung} ${RUNGS[c.rung]} | ${rs.map((x) => Math.round(x.rps)).join(' / ')} | ${rs.map((x) => x.p99).join(' / ')} | ${rs.map((x) => x.cpu.toFixed(3)).join(' / ')} | ${(best / bare).toFixed(2)} | ${s.status} | ${s.headers} | ${s.headerBytes} | ${s.bodyBytes} | ${rs.map((x) => x.writes.toFixed(2)).join(' / ')} |`,
      );
    }
    for (const c of children) console.log(`rung ${c.rung} headers: ${shape.get(c.rung)!.names}`);
  } finally {
    for (const c of children) c.proc.kill('SIGTERM');
    await deleteNamespace(cfg.TEMPORAL_ADDRESS, namespace).catch(() => undefined);
  }
}

if (process.env.LADDER_RUNG) await serve(Number(process.env.LADDER_RUNG));
else await drive();
