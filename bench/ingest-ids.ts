/**
 * Benchmark (not a test): PostgreSQL CPU per 1000 event rows with random (v4) against time-ordered
 * (v7-style: 48-bit milliseconds, then 74 random bits) ids. A scratch database gets the events
 * table's columns and indexes (no foreign keys: the same for both), `--prefill` rows of the scheme,
 * then `--batches` COPYs of 1000 rows, each its own transaction, one at a time; the schemes alternate
 * `--rounds` times. Prints the backend's CPU per 1000 rows (from /proc) and the wall time.
 *
 *   npx tsx bench/ingest-ids.ts [--prefill 1000000] [--batches 200] [--rounds 2]
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { loadConfig } from '../api/src/config.ts';
import { dropDatabase, ensureDatabase } from '../infra/src/services.ts';
import { timeOrderedId } from '../api/src/modules/events/ids.ts';
import { arg } from './common.ts';

const PREFILL = arg('prefill', 1_000_000);
const BATCHES = arg('batches', 200);
const ROUNDS = arg('rounds', 2);

const TICKS = 100;
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS;
};

class Copy {
  private done!: (e: Error | null) => void;
  readonly finished = new Promise<void>((res, rej) => (this.done = (e) => (e ? rej(e) : res())));
  private error: Error | null = null;
  constructor(
    private readonly text: string,
    private readonly data: Buffer,
  ) {}
  submit(c: any) {
    c.query(this.text);
  }
  handleCopyInResponse(c: any) {
    c.sendCopyFromChunk(this.data);
    c.endCopyFrom();
  }
  handleCommandComplete() {}
  handleError(e: Error) {
    this.error = e;
  }
  handleReadyForQuery() {
    this.done(this.error);
  }
}

const DDL = `
create table "events" ("id" uuid not null primary key, "created_at" timestamptz not null, "timestamp" timestamptz not null,
  "name" varchar(255) not null, "source" text not null check (source in ('system', 'user')), "organization_id" uuid not null,
  "customer_id" uuid null, "external_customer_id" varchar(255) null, "metadata" jsonb not null,
  "xid" bigint default ((pg_current_xact_id())::text)::bigint);
create index on "events" ("organization_id", "name", "timestamp");
create index on "events" ("organization_id", "customer_id", "timestamp");
create index on "events" ("organization_id", "external_customer_id", "timestamp");
create index on "events" ("organization_id", "timestamp");
create index on "events" using brin ("xid") with (pages_per_range = 16, autosummarize = on);`;

const V7_SQL = `(lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint), 12, '0') || '7' || substr(md5(random()::text || g), 1, 3)
  || to_hex(8 + floor(random() * 4)::int) || substr(md5(random()::text || g), 4, 15))::uuid`;

async function main() {
  const cfg = loadConfig();
  const url = new URL(cfg.DATABASE_URL);
  url.pathname = `${url.pathname}_bench_ingest_ids_${process.pid}`;
  await ensureDatabase(url.toString(), { recreate: true });
  const db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  try {
    await db.query(DDL);
    const pid = (await db.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    const org = randomUUID();
    const customers = Array.from({ length: 100 }, () => randomUUID());
    console.log(`load average at start: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; prefill ${PREFILL}, ${BATCHES} COPYs of 1000 rows each`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const scheme of ['random', 'time-ordered'] as const) {
        await db.query('truncate "events"');
        await db.query(
          `insert into "events" select ${scheme === 'random' ? 'gen_random_uuid()' : V7_SQL}, now(), now() - interval '1 day', 'api.call', 'user', $1, ($2::uuid[])[g % 100 + 1], null, '{"tokens": 1}'
           from generate_series(1, $3) g`,
          [org, customers, PREFILL],
        );
        await db.query('checkpoint');
        await db.query('vacuum analyze "events"');
        const cpu0 = cpuMs(pid);
        const t0 = performance.now();
        for (let b = 0; b < BATCHES; b++) {
          let text = '';
          const created = new Date().toISOString();
          for (let i = 0; i < 1000; i++) {
            const id = scheme === 'random' ? randomUUID() : timeOrderedId();
            text += `${id}\t${created}\t${created}\t${i % 10 < 7 ? 'api.call' : 'upload'}\tuser\t${org}\t${customers[i % 100]}\t\\N\t{"tokens": ${i}, "model": "gpt-4", "cached": false}\n`;
          }
          const c = new Copy('copy "events" ("id", "created_at", "timestamp", "name", "source", "organization_id", "customer_id", "external_customer_id", "metadata") from stdin', Buffer.from(text));
          db.query(c as never);
          await c.finished;
        }
        const wall = performance.now() - t0;
        const cpu = cpuMs(pid) - cpu0;
        console.log(
          `round ${round + 1} ${scheme.padEnd(12)} PostgreSQL CPU ${(cpu / BATCHES).toFixed(1)} ms per 1000 rows; wall ${(wall / BATCHES).toFixed(1)} ms per COPY (load ${os.loadavg()[0]!.toFixed(2)})`,
        );
      }
    }
  } finally {
    await db.end();
    await dropDatabase(url.toString());
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
