/**
 * Load-insensitive figures per renewal, for bench/renewals and bench/usage-renewals (the machine is
 * shared, so throughput alone says little):
 * - CPU milliseconds of the bench process (its worker runs every activity and workflow task), of the
 *   Temporal server and of the PostgreSQL backends serving the bench database, from /proc/<pid>/stat
 *   before and after the renewal phase (the Temporal server's figure includes whatever else it served
 *   meanwhile: read it next to the load average);
 * - SQL statements, counted in the process at the `pg` client (every statement the ORM, Kysely and the
 *   raw queries send), by normalised text;
 * - workflow history events, workflow tasks, activities and local activities of a sample of renewal
 *   runs (the first run of each workflow: its period wait, the renewal and the continue-as-new).
 */
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import type { Client } from '@temporalio/client';
import { normalise } from '../checkout/pg-counter.ts';

const TICK_MS = 1000 / (Number(execSync('getconf CLK_TCK').toString().trim()) || 100);

/** utime + stime of a process in ms, or null when it is gone. */
export function procCpuMs(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return null;
  }
}

function pidsWhoseCommandLine(test: (cmd: string) => boolean): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (test(cmd)) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The PostgreSQL backends serving `database` now (a backend's process title names its database). */
export const backendPids = (database: string) => pidsWhoseCommandLine((c) => c.startsWith('postgres: ') && c.includes(` ${database} `));

export interface CpuSnapshot {
  self: NodeJS.CpuUsage;
  temporal: Map<number, number>;
  postgres: Map<number, number>;
}

/** `database`: the bench database's name (a backend's process title names its database). */
export function cpuSnapshot(database: string): CpuSnapshot {
  const read = (pids: number[]) => new Map(pids.map((p) => [p, procCpuMs(p) ?? 0]));
  return {
    self: process.cpuUsage(),
    temporal: read(pidsWhoseCommandLine((c) => /\btemporal\b.*\bserver start-dev\b/.test(c))),
    postgres: read(backendPids(database)),
  };
}

export interface CpuSpent {
  worker: number;
  temporal: number;
  postgres: number;
}

/** CPU ms spent since `before` (backends that appeared meanwhile count from 0). */
export function cpuSince(before: CpuSnapshot, database: string): CpuSpent {
  const now = cpuSnapshot(database);
  const self = process.cpuUsage(before.self);
  const sum = (a: Map<number, number>, b: Map<number, number>) => {
    let t = 0;
    for (const [pid, ms] of b) t += ms - (a.get(pid) ?? 0);
    return t;
  };
  return { worker: (self.user + self.system) / 1000, temporal: sum(before.temporal, now.temporal), postgres: sum(before.postgres, now.postgres) };
}

/** Statement counts by normalised text, from the moment `countStatements()` is called. */
export interface StatementCounter {
  total(): number;
  /** Counts since the last `reset()` (or the start). */
  byText(): Map<string, number>;
  reset(): void;
  /** Stops counting (the bench's own queries after the phase). */
  stop(): void;
}

/**
 * Wraps `pg.Client#query` once for the process: every statement any pool in it sends is counted, but
 * for those matching `ignore` (the bench's own progress polls).
 */
export function countStatements(ignore: RegExp): StatementCounter {
  let counts = new Map<string, number>();
  let on = true;
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0];
    const text = typeof q === 'string' ? q : q && typeof q === 'object' && 'text' in q ? String((q as { text: unknown }).text) : '';
    if (on && text && !ignore.test(text)) {
      const k = normalise(text);
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    return original.apply(this, args);
  };
  return {
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    byText: () => counts,
    reset: () => {
      counts = new Map();
    },
    stop: () => {
      on = false;
    },
  };
}

export interface HistoryFigures {
  runs: number;
  events: number;
  workflowTasks: number;
  activities: number;
  localActivities: number;
  timers: number;
  signals: number;
  updates: number;
}

/** History figures of the first run of each of `runs` (workflow id, first run id), summed. */
export async function historyFigures(client: Client, runs: { workflowId: string; runId: string }[]): Promise<HistoryFigures> {
  const f: HistoryFigures = { runs: 0, events: 0, workflowTasks: 0, activities: 0, localActivities: 0, timers: 0, signals: 0, updates: 0 };
  for (const r of runs) {
    const h = await client.workflow.getHandle(r.workflowId, r.runId).fetchHistory();
    f.runs++;
    for (const e of h.events ?? []) {
      f.events++;
      if (e.workflowTaskCompletedEventAttributes) f.workflowTasks++;
      if (e.activityTaskScheduledEventAttributes) f.activities++;
      // Local activities only (a patch marker is a marker too, once per run).
      if (e.markerRecordedEventAttributes?.markerName === 'core_local_activity') f.localActivities++;
      if (e.timerStartedEventAttributes) f.timers++;
      if (e.workflowExecutionSignaledEventAttributes) f.signals++;
      if (e.workflowExecutionUpdateAcceptedEventAttributes) f.updates++;
    }
  }
  return f;
}

/**
 * The per-renewal block both benches print: CPU ms by process, statements, history figures, and the
 * statements by text with `--statements` (each divided by the renewals).
 */
export function printPerRenewal(
  renewals: number,
  cpu: CpuSpent,
  statements: StatementCounter,
  history: HistoryFigures,
  opts: { showStatements: boolean },
): void {
  const per = (x: number) => (renewals ? x / renewals : 0);
  const h = (x: number) => (history.runs ? (x / history.runs).toFixed(1) : '?');
  console.log(`per renewal (over ${renewals} renewals; CPU from /proc, load-insensitive except Temporal's, which is shared):`);
  console.log(
    `  CPU ms:       worker ${per(cpu.worker).toFixed(2)}, postgres backends ${per(cpu.postgres).toFixed(2)}, Temporal server ${per(cpu.temporal).toFixed(2)}` +
      ` (total ${per(cpu.worker + cpu.postgres + cpu.temporal).toFixed(2)})`,
  );
  const txControl = [...statements.byText()].filter(([t]) => /^(begin|start transaction|commit|rollback|savepoint|release)\b/i.test(t)).reduce((a, [, n]) => a + n, 0);
  console.log(`  SQL:          ${per(statements.total()).toFixed(1)} statements (${per(txControl).toFixed(1)} of them begin/commit/savepoint)`);
  console.log(
    `  history:      ${h(history.events)} events, ${h(history.workflowTasks)} workflow tasks, ${h(history.activities)} activities, ` +
      `${h(history.localActivities)} local activities, ${h(history.timers)} timers per run (${history.runs} runs sampled: the run's start, the period wait, the renewal, the next period's timer)`,
  );
  if (opts.showStatements) {
    for (const [t, n] of [...statements.byText()].sort((a, b) => b[1] - a[1])) console.log(`    ${per(n).toFixed(2).padStart(6)}  ${t.slice(0, 220)}`);
  }
}

export const loadAverage = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

/** The machine line both benches print first. */
export function machine(): string {
  return `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, load average ${loadAverage()}`;
}

/**
 * `--cpu-profile <file>`: a V8 CPU profile of this process (the worker) over the renewal phase, and
 * its self time by package or source folder printed (open the file in Chrome's DevTools for more).
 */
export async function startProfile(): Promise<((renewals: number) => Promise<void>) | null> {
  const i = process.argv.indexOf('--cpu-profile');
  if (i < 0) return null;
  const file = process.argv[i + 1] ?? 'renewals.cpuprofile';
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 1000 });
  await session.post('Profiler.start');
  return async (renewals: number) => {
    const { profile } = await session.post('Profiler.stop');
    fs.writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const self = new Map<number, number>();
    const samples = profile.samples ?? [];
    const deltas = profile.timeDeltas ?? [];
    samples.forEach((id, k) => self.set(id, (self.get(id) ?? 0) + (deltas[k] ?? 0) / 1000));
    const groups = new Map<string, number>();
    for (const [id, ms] of self) {
      const n = byId.get(id)!;
      const url = n.callFrame.url;
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url) ?? /\/work\/main\/([^/]+\/src\/[^/]+(?:\/[^/]+)?)/.exec(url);
      const key = m ? m[1]! : url ? url.replace(/^.*\//, '') : `(${n.callFrame.functionName || 'native'})`;
      groups.set(key, (groups.get(key) ?? 0) + ms);
    }
    const total = [...groups.values()].reduce((a, b) => a + b, 0);
    console.log(`cpu profile:    ${file}; sampled ${(total / Math.max(renewals, 1)).toFixed(2)} ms per renewal, self time by package/folder:`);
    for (const [k, ms] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
      console.log(`    ${(ms / Math.max(renewals, 1)).toFixed(2).padStart(6)} ms  ${((100 * ms) / total).toFixed(1).padStart(5)} %  ${k}`);
    }
  };
}
