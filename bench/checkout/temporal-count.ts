/**
 * What a benchmark window cost the Temporal server, read from the histories of its own namespace:
 * every run in the namespace is read and its events that fall inside the window are counted, by
 * workflow type (so long-running runs such as the outbox dispatcher count only their events of the window).
 */
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';

const E = proto.temporal.api.enums.v1.EventType;

export interface TypeCounts {
  runs: number;
  events: number;
  workflowTasks: number;
  activityTasks: number;
  localActivities: number;
  signals: number;
  timers: number;
  children: number;
}

const empty = (): TypeCounts => ({ runs: 0, events: 0, workflowTasks: 0, activityTasks: 0, localActivities: 0, signals: 0, timers: 0, children: 0 });

const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined): number =>
  t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;

/** Events of every run of `client`'s namespace between `from` and `to` (epoch ms), by workflow type. */
export async function historyCounts(client: Client, from: number, to: number): Promise<Map<string, TypeCounts>> {
  const out = new Map<string, TypeCounts>();
  const runs: { workflowId: string; runId: string; type: string }[] = [];
  for await (const wf of client.workflow.list()) {
    if (wf.closeTime && wf.closeTime.getTime() < from) continue;
    if (wf.startTime.getTime() > to) continue;
    runs.push({ workflowId: wf.workflowId, runId: wf.runId, type: wf.type });
  }
  let i = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (i < runs.length) {
        const r = runs[i++]!;
        const history = await client.workflow.getHandle(r.workflowId, r.runId).fetchHistory();
        const c = out.get(r.type) ?? empty();
        out.set(r.type, c);
        for (const ev of history.events ?? []) {
          const at = ms(ev.eventTime as never);
          if (at < from || at > to) continue;
          c.events++;
          switch (ev.eventType) {
            case E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
              c.runs++;
              break;
            case E.EVENT_TYPE_WORKFLOW_TASK_STARTED:
              c.workflowTasks++;
              break;
            case E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
              c.activityTasks++;
              break;
            case E.EVENT_TYPE_MARKER_RECORDED:
              c.localActivities++;
              break;
            case E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
              c.signals++;
              break;
            case E.EVENT_TYPE_TIMER_STARTED:
              c.timers++;
              break;
            case E.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
              c.children++;
              break;
          }
        }
      }
    }),
  );
  return out;
}

/** One line per workflow type and a total line, every figure divided by `purchases`. */
export function describeCounts(counts: Map<string, TypeCounts>, purchases: number): string[] {
  const total = empty();
  const lines: string[] = [];
  const f = (n: number) => (n / purchases).toFixed(2).padStart(7);
  const row = (name: string, c: TypeCounts) =>
    `  ${name.padEnd(34)}${f(c.runs)}${f(c.events)}${f(c.workflowTasks)}${f(c.activityTasks)}${f(c.localActivities)}${f(c.signals)}${f(c.timers)}${f(c.children)}`;
  for (const [type, c] of [...counts].sort((a, b) => b[1].events - a[1].events)) {
    if (!c.events) continue;
    for (const k of Object.keys(total) as (keyof TypeCounts)[]) total[k] += c[k];
    lines.push(row(type, c));
  }
  return [
    `  ${'workflow type'.padEnd(34)}${'starts'.padStart(7)}${'events'.padStart(7)}${'wf task'.padStart(7)}${'act.'.padStart(7)}${'local'.padStart(7)}${'signal'.padStart(7)}${'timer'.padStart(7)}${'child'.padStart(7)}`,
    ...lines,
    row('all', total),
  ];
}
