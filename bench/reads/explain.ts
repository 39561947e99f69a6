/**
 * Benchmark helper (not a test): `EXPLAIN (ANALYZE, BUFFERS)` of the statements the seller reads run,
 * on the database `npm run bench:reads -- --keep` left (`.ci/out/bench-reads-kept.json`), as the API
 * runs them (prepared; the generic plan, as PostgreSQL uses after five executions of a named statement):
 *
 *   npx tsx bench/reads/explain.ts [--only orders,subscriptions] [--limit 10] [--runs 50] [--plan] [--spliced] [--split] [--auto]
 *
 * `--spliced`: the statement the API runs outside a transaction (for orders, subscriptions and products
 * lists: the page's count, ids and versions; the kept items are not built). `--split`: also the
 * statement with its `total_count` replaced by a constant and the count alone (a count of the matched
 * rows, or for an unfiltered list the sum of its kept counts, `list_counts`), timed without per-node
 * timing (`timing off`: the clock reads per row would otherwise dominate a count of thousands of rows).
 * `--auto`: without forcing the generic plan (as the API's connections run), and how many executions
 * took the generic plan and how many were planned again.
 *
 * Prints per read the server's execution time (median of `--runs`) and, with `--plan`, the plan.
 * The statement text comes from the modules' own builders, captured through a stand-in entity manager.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { EntityManager } from '../../api/src/kit/db.ts';
import { listBenefitsJson } from '../../api/src/modules/benefits/read-sql.ts';
import { listCustomersJson } from '../../api/src/modules/customers/read-sql.ts';
import { listOrdersJson } from '../../api/src/modules/orders/read-sql.ts';
import { useMediaStorage } from '../../api/src/modules/products/media.ts';
import { listProductsJson } from '../../api/src/modules/products/read-sql.ts';
import { listSubscriptionsJson } from '../../api/src/modules/subscriptions/read-sql.ts';
import { arg } from '../common.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const kept = JSON.parse(readFileSync(path.join(ROOT, '.ci/out/bench-reads-kept.json'), 'utf8')) as { databaseUrl: string; organizationId: string };
const onlyArg = process.argv.indexOf('--only');
const ONLY = onlyArg >= 0 ? process.argv[onlyArg + 1]!.split(',') : null;
const LIMIT = arg('limit', 10);
const RUNS = arg('runs', 30);
const PLAN = process.argv.includes('--plan');
const SPLICED = process.argv.includes('--spliced');
const SPLIT = process.argv.includes('--split');
const AUTO = process.argv.includes('--auto');

/**
 * Captures the first statement a read builder runs: inside a "transaction" (`em.execute`: the full
 * statement), or with `--spliced` through a stand-in pool (the statement the API runs outside a
 * transaction: for lists of kept items, the page's count, ids and versions).
 */
async function capture(run: (em: EntityManager) => Promise<unknown>): Promise<{ sql: string; params: unknown[] }> {
  let got: { sql: string; params: unknown[] } | undefined;
  const pool = {
    query: async (q: { text: string; values: unknown[] }) => {
      got ??= { sql: q.text, params: q.values };
      return { rows: [{ body: '{}', pagination: '{}', id: null, v: '' }] };
    },
  };
  const em = {
    isInTransaction: () => !SPLICED,
    getConnection: () => ({ getNativeClient: async () => pool }),
    execute: async (sql: string, params: unknown[]) => {
      got = { sql, params };
      return [{ body: '{}' }];
    },
  } as unknown as EntityManager;
  await run(em);
  return got!;
}

useMediaStorage({ publicUrl: (key: string) => `http://127.0.0.1:8333/public/${key}` });
const org = [kept.organizationId];
const page = { page: 1, limit: LIMIT };
// Each list's default sorting (its route's `sortingQuery` default), as the bench's requests ask.
const sorting = ['-created_at'];
const reads: [string, (em: EntityManager) => Promise<unknown>][] = [
  ['products', (em) => listProductsJson(em, { organizationIds: org }, sorting, page)],
  ['customers', (em) => listCustomersJson(em, { organizationIds: org, metadata: [] }, sorting, page)],
  ['orders', (em) => listOrdersJson(em, org, { ...page, sorting }, page)],
  ['subscriptions', (em) => listSubscriptionsJson(em, { organizationIds: org }, ['-started_at'], page)],
  ['benefits', (em) => listBenefitsJson(em, { organizationIds: org }, sorting, page)],
];

const db = new pg.Client({ connectionString: kept.databaseUrl, application_name: 'bench-reads-explain' });
await db.connect();
try {
  // `--auto`: PostgreSQL's own choice between the generic plan and one planned per execution, as the API's connections run.
  if (!AUTO) await db.query('set plan_cache_mode = force_generic_plan');
  for (const [name, run] of reads) {
    if (ONLY && !ONLY.includes(name)) continue;
    const { sql, params } = await capture(run);
    let n = 0;
    const text = sql.replace(/\?/g, () => `$${++n}`);
    const literals = params.map((p) => (typeof p === 'number' ? String(p) : `'${String(p).replace(/'/g, "''")}'`));
    // The total's CTE: a count of the matched rows, or the sum of an unfiltered list's kept counts.
    const countAt = text.indexOf('c as (');
    const countEnd = text.indexOf(')\n    select', countAt) + 1;
    const variants: [string, string][] = [['', text]];
    if (SPLIT && countAt >= 0 && countEnd > 0) {
      const COUNT = text.slice(countAt, countEnd);
      // The parameters only the count used stay referenced, so that the statement prepares with the same arguments.
      const refs = [...COUNT.matchAll(/\$\d+/g)].map((m) => `${m[0]}::text is not null`);
      variants.push([' without the count', text.replace(COUNT, `c as (select 0::bigint as t${refs.length ? ` where ${refs.join(' and ')}` : ''})`)]);
      variants.push([' the count alone', `${text.slice(0, countEnd)} select c.t from c`]);
    }
    for (const [label, variant] of variants) {
      const stmt = `explain_${name}`;
      const used = Math.max(0, ...[...variant.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
      const args = literals.slice(0, used).join(', ');
      await db.query(`deallocate all`);
      await db.query(`prepare ${stmt} as ${variant}`);
      const times: number[] = [];
      let plan = '';
      for (let i = 0; i < RUNS; i++) {
        const r = await db.query(`explain (analyze, buffers, timing ${SPLIT ? 'off' : 'on'}, format text) execute ${stmt}(${args})`);
        const lines = r.rows.map((x: Record<string, string>) => x['QUERY PLAN']!);
        times.push(Number(/Execution Time: ([\d.]+)/.exec(lines.join('\n'))?.[1]));
        plan = lines.join('\n');
      }
      times.sort((a, b) => a - b);
      const body = await db.query(`execute ${stmt}(${args})`);
      const bytes = body.rows.reduce((n: number, row: object) => n + Buffer.byteLength(Object.values(row).join('')), 0);
      const med = times[Math.floor(times.length / 2)]!;
      const plans = (await db.query(`select generic_plans, custom_plans from pg_prepared_statements where name = $1`, [stmt])).rows[0] as { generic_plans: string; custom_plans: string };
      if (AUTO) console.log(`  plans: ${plans.generic_plans} generic, ${plans.custom_plans} custom`);
      console.log(`${`${name} list limit=${LIMIT}${label}`.padEnd(44)} execution ${med.toFixed(3)} ms (median of ${RUNS}, fastest ${times[0]!.toFixed(3)}), ${bytes} bytes`);
      if (PLAN) console.log(plan, '\n');
    }
  }
} finally {
  await db.end();
}
