/** Small helpers the benchmarks share: numeric flags, a concurrency pool, and a Temporal namespace of their own. */
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import pg from 'pg';
import { loadConfig, type Config } from '../api/src/config.ts';
import type { MikroORM } from '@mikro-orm/postgresql';
import { initOrm, migrate } from '../api/src/kit/db.ts';
import { allEntities } from '../api/src/modules/entities.ts';
import { dropDatabase, ensureDatabase } from '../infra/src/services.ts';
import { createRunNamespace, describeFootprint, footprint, runNamespaceName } from '../infra/src/temporal-housekeeping.ts';

/** `--name 10000`, `--name=10k` or `--name 1_000`; `fallback` when absent. */
export function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const raw = i >= 0 ? process.argv[i + 1] : process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  if (raw === undefined) return fallback;
  const m = /^([\d_.]+)([k]?)$/i.exec(raw.trim());
  if (!m) throw new Error(`--${name}: not a number: ${raw}`);
  return Math.round(Number(m[1]!.replace(/_/g, '')) * (m[2] ? 1000 : 1));
}

/** Runs `fn` over `items` with at most `concurrency` in flight. */
export async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

export const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * What the Temporal server held before the run (a used stack is slower: docs/performance.md), and a
 * namespace of the run's own, to be deleted at the end with every run in it (`deleteNamespace`).
 */
export async function benchNamespace(base: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'>): Promise<{ used: string; namespace: string }> {
  const used = describeFootprint(await footprint(base.TEMPORAL_ADDRESS, base.TEMPORAL_NAMESPACE));
  const namespace = runNamespaceName(base.TEMPORAL_NAMESPACE, 'bench');
  await createRunNamespace(base.TEMPORAL_ADDRESS, namespace);
  return { used, namespace };
}

/** A TCP port free on 127.0.0.1 at the moment of asking. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** Resolves once the child's stdout or stderr has printed `text`; rejects, with its last output, if it exits first. */
export function outputOf(proc: ChildProcess, text: string, name: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let out = '';
    const on = (d: Buffer) => {
      out = (out + d.toString()).slice(-5000);
      if (out.includes(text)) resolve();
    };
    proc.stdout!.on('data', on);
    proc.stderr!.on('data', on);
    proc.once('exit', (code) => reject(new Error(`${name} exited (${code}): ${out}`)));
  });
}

/**
 * Runs `work` on a fresh, migrated database `<database>_<suffix>_<pid>` (an ORM with a pool of
 * `poolMax` and one plain client on it), then drops it, and reports a failure as the process's exit
 * code: a bench's `main`.
 */
export function onScratchDatabase(
  suffix: string,
  poolMax: number,
  work: (s: { orm: MikroORM; db: pg.Client; name: string }) => Promise<void>,
): void {
  const url = new URL(loadConfig().DATABASE_URL);
  const name = `${url.pathname.slice(1)}_${suffix}_${process.pid}`;
  url.pathname = `/${name}`;
  const run = async () => {
    await ensureDatabase(url.toString(), { recreate: true });
    const orm = await initOrm({ DATABASE_URL: url.toString(), DATABASE_POOL_MAX: poolMax }, allEntities);
    const db = new pg.Client({ connectionString: url.toString() });
    try {
      await migrate(orm);
      await db.connect();
      await work({ orm, db, name });
    } finally {
      await db.end().catch(() => undefined); // ignore: closing after a failure
      await orm.close(true);
      await dropDatabase(url.toString()).catch(() => undefined); // ignore: dropped by hand if this fails
    }
  };
  run().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
