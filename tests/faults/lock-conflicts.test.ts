/**
 * A deadlock is seen in the API's and the worker's logs, not only in PostgreSQL's: a request that ends
 * in a real deadlock (two transactions updating two rows in opposite orders) is logged at warn with
 * SQLSTATE 40P01 and the statement that lost, its literals blanked; the worker's activity interceptor
 * logs one the same way and lets the error go on to Temporal's retries.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pino } from 'pino';
import type { ActivityInboundCallsInterceptor } from '@temporalio/worker';
import type { EntityManager } from '../../api/src/kit/db.ts';
import { lockConflictInterceptor } from '../../workers/src/lock-conflicts.ts';
import { startTestServer, type TestServer } from '../harness.ts';

let srv: TestServer;
const lines: Record<string, unknown>[] = [];

/** Two transactions that each update one row and then the other's: PostgreSQL aborts one with 40P01. */
async function deadlock(em: EntityManager, tag: string): Promise<void> {
  let ready = 0;
  let go: () => void = () => {};
  const bothLocked = new Promise<void>((r) => (go = r));
  const side = (first: number, second: number) =>
    em.fork().transactional(async (tx) => {
      await tx.execute(`update h7_lock_rows set note = 'first ${tag}' where id = ${first}`);
      if (++ready === 2) go();
      await bothLocked;
      await tx.execute(`update h7_lock_rows set note = 'secret-${tag}' where id = ${second}`);
    });
  await Promise.all([side(1, 2), side(2, 1)]);
}

beforeAll(async () => {
  srv = await startTestServer({
    worker: false,
    configure: (app) => {
      app.post('/test/deadlock', (_req, res, next) => {
        deadlock(srv.deps.orm.em.fork(), 'api').then(() => res.status(204).end(), next);
      });
    },
  });
  await srv.deps.orm.em.getConnection().execute(`create table h7_lock_rows (id int primary key, note text); insert into h7_lock_rows values (1, ''), (2, '')`);
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  srv.deps.log = pino({ level: 'warn' }, sink);
});
afterAll(async () => {
  await srv?.close();
});

it('a request ending in a deadlock is answered 500 and logged at warn with SQLSTATE 40P01 and its statement, literals blanked', async () => {
  const res = await fetch(`${srv.url}/test/deadlock`, { method: 'POST' });
  expect(res.status).toBe(500);
  expect((await res.json()) as unknown).toMatchObject({ error: 'InternalServerError' });
  const logged = lines.filter((l) => l.msg === 'deadlock detected');
  expect(logged).toHaveLength(1);
  expect(logged[0]).toMatchObject({ level: 40, sqlState: '40P01', requestId: expect.any(String) });
  expect(logged[0]!.statement).toMatch(/^update h7_lock_rows set note = '…' where id = [12]$/);
  expect(JSON.stringify(logged[0])).not.toContain('secret-api');
  expect(lines.filter((l) => l.msg === 'unhandled error')).toEqual([]);
});

it("the worker's activity interceptor logs an activity's deadlock at warn with its run and statement, and rethrows it", async () => {
  const warned: [Record<string, unknown>, string][] = [];
  const log = { warn: (o: Record<string, unknown>, msg: string) => warned.push([o, msg]) };
  const info = { activityType: 'probeActivity', attempt: 2, workflowExecution: { workflowId: 'wf-probe', runId: 'r' } };
  const interceptors = lockConflictInterceptor(log as never)({ info } as never);
  const inbound = interceptors.inbound as ActivityInboundCallsInterceptor;
  const run = inbound.execute!({ args: [], headers: {} }, () => deadlock(srv.deps.orm.em.fork(), 'worker'));
  const err = await run.then(
    () => null,
    (e: unknown) => e,
  );
  expect((err as { code?: string } | null)?.code).toBe('40P01');
  expect(warned).toHaveLength(1);
  expect(warned[0]![1]).toBe('deadlock detected');
  expect(warned[0]![0]).toMatchObject({ activity: 'probeActivity', attempt: 2, workflowId: 'wf-probe', sqlState: '40P01' });
  expect(warned[0]![0].statement).toMatch(/^update h7_lock_rows set note = '…' where id = [12]$/);
  expect(JSON.stringify(warned[0]![0].statement)).not.toContain('secret-worker');
});
