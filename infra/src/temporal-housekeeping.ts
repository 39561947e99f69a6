/**
 * Keeps the local Temporal dev server from filling up: test runs and benchmarks work in a namespace of
 * their own and delete it when they end (the server then deletes every run in it, open or closed),
 * namespaces left by a run that died are deleted by the next one, and the development namespace keeps
 * closed runs for a bounded time (TEMPORAL_RETENTION_DAYS). `footprint` is what benchmarks print first.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { ensureSearchAttributes } from '../../api/src/kit/run-metadata.ts';
import { DATA_DIR } from './services.ts';

const DAY = 86_400;

async function withConnection<T>(address: string, f: (c: Connection) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address, connectTimeout: '10s' });
  try {
    return await f(connection);
  } finally {
    await connection.close().catch(() => {});
  }
}

/** `<base>-<purpose>-<pid>`: the owner's pid lets a later run find namespaces whose owner is gone. */
export function runNamespaceName(base: string, purpose: string, pid = process.pid): string {
  return `${base}-${purpose}-${pid}`;
}

/** Registers `name` (closed runs kept one day) with the platform's search attributes. */
export async function createRunNamespace(address: string, name: string): Promise<void> {
  await withConnection(address, async (c) => {
    try {
      await c.workflowService.registerNamespace({ namespace: name, workflowExecutionRetentionPeriod: msToTs(DAY * 1000) });
    } catch (err) {
      if (!/already exists/i.test((err as Error).message)) throw err;
    }
    await ensureSearchAttributes(c, name);
  });
}

/** Deletes a namespace and, with it, every workflow run in it. */
export async function deleteNamespace(address: string, name: string): Promise<void> {
  await withConnection(address, async (c) => {
    try {
      await c.operatorService.deleteNamespace({ namespace: name });
    } catch (err) {
      if (!/not found|does not exist|deleted/i.test((err as Error).message)) throw err;
    }
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Deletes `<base>-<purpose>-<pid>` namespaces whose process is gone (a run that was killed). */
export async function deleteStaleRunNamespaces(address: string, base: string, purpose: string): Promise<string[]> {
  const prefix = `${base}-${purpose}-`;
  const stale: string[] = [];
  await withConnection(address, async (c) => {
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await c.workflowService.listNamespaces({ pageSize: 100, nextPageToken });
      for (const n of page.namespaces ?? []) {
        const name = n.namespaceInfo?.name ?? '';
        const pid = Number(name.slice(prefix.length));
        // State 2 is DELETED: already on its way out.
        if (name.startsWith(prefix) && Number.isInteger(pid) && !isAlive(pid) && n.namespaceInfo?.state !== 2) stale.push(name);
      }
      nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    } while (nextPageToken);
  });
  for (const name of stale) await deleteNamespace(address, name);
  return stale;
}

/** Sets how long closed runs of `namespace` are kept. */
export async function setRetention(address: string, namespace: string, days: number): Promise<void> {
  await withConnection(address, (c) =>
    c.workflowService.updateNamespace({ namespace, config: { workflowExecutionRetentionTtl: msToTs(Math.round(days * DAY * 1000)) } }),
  );
}

export interface Footprint {
  /** Size of the dev server's SQLite file (with its write-ahead log); null when it is not local. */
  dbBytes: number | null;
  openRuns: number;
  closedRuns: number;
}

/** How full the Temporal server is: what benchmarks print before they start. */
export async function footprint(address: string, namespace: string): Promise<Footprint> {
  const files = ['temporal.db', 'temporal.db-wal'].map((f) => path.join(DATA_DIR, f));
  const dbBytes = existsSync(files[0]!) ? files.reduce((s, f) => s + (existsSync(f) ? statSync(f).size : 0), 0) : null;
  return withConnection(address, async (c) => {
    const count = async (query: string) =>
      Number((await c.workflowService.countWorkflowExecutions({ namespace, query })).count ?? 0);
    const open = await count('ExecutionStatus = "Running"');
    const all = await count('');
    return { dbBytes, openRuns: open, closedRuns: all - open };
  });
}

export function describeFootprint(f: Footprint): string {
  const size = f.dbBytes === null ? 'not local' : `${(f.dbBytes / 1e6).toFixed(0)} MB`;
  return `Temporal database ${size}, ${f.openRuns} open runs, ${f.closedRuns} closed runs kept`;
}
