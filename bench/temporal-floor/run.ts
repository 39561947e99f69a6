/**
 * Benchmark (not a test): the floor the Temporal dev server and one Node worker set on this machine,
 * to read bench/checkout against. Starts N trivial workflows at a given concurrency and waits for each
 * result: `oneLocalActivity` (one workflow task, the shape of the checkout-confirm workflow) and
 * `oneRemoteActivity` (two workflow tasks and an activity task, the shape of a benefit-grant run).
 * Prints workflows per second and the CPU milliseconds per workflow of the Temporal server (read from
 * /proc) and of this process (client + worker). Asserts nothing.
 *
 *   npx tsx bench/temporal-floor/run.ts [--count 400] [--concurrency 50]
 *
 * Needs the Temporal dev server (`npm start`); uses its own task queue.
 *
 * Measured on the 2-core machine (2026-11-25, dev server with its SQLite file in WAL mode, 400 at
 * concurrency 50): oneLocalActivity 52–71 workflows/s, 14–19 ms Temporal + 9–10 ms client/worker CPU
 * per workflow; oneRemoteActivity 37–48/s, 25–33 ms Temporal + 9 ms.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const COUNT = Number(arg('count') ?? 400);
const CONCURRENCY = Number(arg('concurrency') ?? 50);
const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const taskQueue = `bench-floor-${randomUUID().slice(0, 8)}`;
const here = path.dirname(fileURLToPath(import.meta.url));

/** CPU milliseconds (user + system) a process has used so far. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / 100;
}
function temporalPid(): number | null {
  try {
    const out = execFileSync('pgrep', ['-f', 'temporal server start-dev'], { encoding: 'utf8' }).trim().split('\n')[0];
    return out ? Number(out) : null;
  } catch {
    return null;
  }
}

const connection = await NativeConnection.connect({ address });
const worker = await Worker.create({
  connection,
  taskQueue,
  workflowsPath: path.join(here, 'workflows.ts'),
  activities: { noop: async (n: number) => n },
});
const client = new Client({ connection: await Connection.connect({ address }) });
const running = worker.run();
const tpid = temporalPid();

console.log(`temporal floor: ${os.cpus().length} cores, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, ${COUNT} workflows at concurrency ${CONCURRENCY}`);
console.log('workflow           workflows/s  p50 ms  temporal CPU ms/wf  client+worker CPU ms/wf');
for (const wf of ['oneLocalActivity', 'oneRemoteActivity'] as const) {
  for (let i = 0; i < 20; i++) await client.workflow.execute(wf, { taskQueue, workflowId: `${taskQueue}-warm-${wf}-${i}`, args: [i] });
  const t0 = tpid ? cpuMs(tpid) : 0;
  const p0 = process.cpuUsage();
  const started = performance.now();
  const lat: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < COUNT) {
        const n = next++;
        const s = performance.now();
        await client.workflow.execute(wf, { taskQueue, workflowId: `${taskQueue}-${wf}-${n}`, args: [n] });
        lat.push(performance.now() - s);
      }
    }),
  );
  const secs = (performance.now() - started) / 1000;
  const p = process.cpuUsage(p0);
  lat.sort((a, b) => a - b);
  const tcpu = tpid ? ((cpuMs(tpid) - t0) / COUNT).toFixed(1) : 'n/a';
  console.log(
    `${wf.padEnd(18)} ${(COUNT / secs).toFixed(1).padStart(11)}  ${lat[Math.floor(lat.length / 2)]!.toFixed(0).padStart(6)}  ${String(tcpu).padStart(18)}  ${((p.user + p.system) / 1000 / COUNT).toFixed(1).padStart(23)}`,
  );
}
worker.shutdown();
await running;
