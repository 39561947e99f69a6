/** Small helpers the benchmarks share: numeric flags, a concurrency pool, and a Temporal namespace of their own. */
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import type { Config } from '../api/src/config.ts';
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
