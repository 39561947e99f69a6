/**
 * Benchmark helper (not a test): on the database `npm run bench:reads -- --keep` left
 * (`.ci/out/bench-reads-kept.json`), every page of the orders, subscriptions and products lists (limit 10 and
 * 100, a few sortings) read the spliced way (`kit/read-fragments.ts`, outside a transaction) and by
 * the full statement (inside one) must be the same bytes; then the CPU of this process and of the
 * PostgreSQL backends per page, each way, cold and with the fragments kept:
 *
 *   npx tsx bench/reads/splice-check.ts [--runs 200]      (GENERIC=1: its connection forces generic plans, plan_cache_mode)
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { EntityManager } from '../../api/src/kit/db.ts';
import { listOrdersJson } from '../../api/src/modules/orders/read-sql.ts';
import { useMediaStorage } from '../../api/src/modules/products/media.ts';
import { listProductsJson } from '../../api/src/modules/products/read-sql.ts';
import { listSubscriptionsJson } from '../../api/src/modules/subscriptions/read-sql.ts';
import { arg } from '../common.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const kept = JSON.parse(readFileSync(path.join(ROOT, '.ci/out/bench-reads-kept.json'), 'utf8')) as { databaseUrl: string; organizationId: string };
const RUNS = arg('runs', 200);

useMediaStorage({ publicUrl: (key: string) => `http://127.0.0.1:8333/public/${key}` });
const pool = new pg.Pool({ connectionString: kept.databaseUrl, max: 1, ...(process.env.GENERIC ? { options: '-c plan_cache_mode=force_generic_plan' } : {}) });

/** An entity manager with just what the read builders use, in or out of a "transaction" on `pool`. */
function em(inTransaction: boolean): EntityManager {
  return {
    isInTransaction: () => inTransaction,
    getConnection: () => ({ getNativeClient: async () => pool }),
    execute: async (sql: string, params: unknown[]) => {
      // Prepared, as the API runs the full statement outside a transaction.
      let n = 0;
      const text = sql.replace(/\?/g, () => `$${++n}`);
      return (await pool.query({ name: `full_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`, text, values: params })).rows;
    },
  } as unknown as EntityManager;
}

const org = [kept.organizationId];
const reads: [string, (em: EntityManager, limit: number, sorting: string[]) => Promise<{ text: string }>, string[][]][] = [
  ['orders', (e, limit, sorting) => listOrdersJson(e, org, { sorting } as never, { page: 1, limit }), [['-created_at'], ['customer'], ['-amount']]],
  ['subscriptions', (e, limit, sorting) => listSubscriptionsJson(e, { organizationIds: org }, sorting, { page: 1, limit }), [['-created_at'], ['customer'], ['-amount']]],
  ['products', (e, limit, sorting) => listProductsJson(e, { organizationIds: org }, sorting, { page: 1, limit }), [['-created_at'], ['name'], ['-price_amount']]],
];

/** CPU ms of the PostgreSQL backends serving this process's pool (their /proc stat). */
async function backendCpuMs(): Promise<number> {
  const { rows } = await pool.query<{ pid: number }>('select pg_backend_pid() as pid');
  const fields = readFileSync(`/proc/${rows[0]!.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

let mismatches = 0;
for (const [name, read, sortings] of reads) {
  for (const limit of [10, 100]) {
    for (const sorting of sortings) {
      const full = (await read(em(true), limit, sorting)).text;
      for (let i = 0; i < 2; i++) {
        const spliced = (await read(em(false), limit, sorting)).text;
        if (spliced !== full) {
          mismatches++;
          const at = [...spliced].findIndex((ch, k) => ch !== full[k]);
          console.log(`MISMATCH ${name} limit=${limit} ${sorting}: at ${at}: ${spliced.slice(at - 80, at + 80)}\n  full: ${full.slice(at - 80, at + 80)}`);
        }
      }
    }
  }
}
console.log(mismatches ? `${mismatches} mismatches` : 'spliced pages = full statement pages (orders, subscriptions, products; limit 10 and 100; 3 sortings)');

for (const [name, read] of reads) {
  for (const limit of [10, 100]) {
    for (const [way, inTx] of [['full', true], ['spliced', false]] as const) {
      const e = em(inTx);
      await read(e, limit, ['-created_at']);
      const cpu0 = process.cpuUsage();
      const pg0 = await backendCpuMs();
      for (let i = 0; i < RUNS; i++) await read(e, limit, ['-created_at']);
      const cpu = process.cpuUsage(cpu0);
      const pgMs = (await backendCpuMs()) - pg0;
      console.log(`${name} limit=${limit} ${way.padEnd(8)} node ${((cpu.user + cpu.system) / 1000 / RUNS).toFixed(2)} ms  PostgreSQL ${(pgMs / RUNS).toFixed(2)} ms per page`);
    }
  }
}
await pool.end();
