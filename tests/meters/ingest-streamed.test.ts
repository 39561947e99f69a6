/**
 * POST /v1/events/ingest reads its body as it arrives (events/streamed.ts): rows reach PostgreSQL
 * while the client is still sending, a body split anywhere (inside a string, an escape, a number, a
 * multi-byte character) is stored exactly, a slow or vanished client keeps nothing half-written and
 * gives its connection back, and every refused body gets the answer the whole-body parser gives (the
 * same bytes sent gzip-compressed take the parser's path).
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionsStillLent, startTestServer, type TestServer } from '../harness.ts';
import { call, createCustomer, usageSeller } from '../catalogue/events-helpers.ts';

let srv: TestServer;
let s: Awaited<ReturnType<typeof usageSeller>>;
let customer: { id: string };
let db: pg.Client;

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  s = await usageSeller(srv);
  customer = await createCustomer(srv, s.organization.id);
  db = new pg.Client({ connectionString: srv.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await srv?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Sent {
  status: number;
  body: any;
}

/**
 * Sends `body` in `pieces` (chunked, each its own write), waiting `gap` between pieces and running
 * `between(i)` before piece i; `abortAt` destroys the request before that piece.
 */
function send(
  pieces: Buffer[],
  opts: { headers?: Record<string, string>; gap?: number; between?: (i: number) => Promise<void>; abortAt?: number } = {},
): Promise<Sent | 'aborted'> {
  const url = new URL('/v1/events/ingest', srv.url);
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json', ...opts.headers },
    });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString();
        resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null });
      });
    });
    req.on('error', (err) => (opts.abortAt !== undefined ? resolve('aborted') : reject(err)));
    void (async () => {
      for (let i = 0; i < pieces.length; i++) {
        if (opts.between) await opts.between(i);
        if (opts.abortAt === i) {
          req.destroy();
          resolve('aborted');
          return;
        }
        req.write(pieces[i]!);
        if (opts.gap) await sleep(opts.gap);
      }
      req.end();
    })();
  });
}

/** The same bytes gzip-compressed: read whole by the JSON body parser (the ordinary path). */
const sendWhole = (body: Buffer) => send([gzipSync(body)], { headers: { 'content-encoding': 'gzip' } });

const split = (buf: Buffer, size: number) => Array.from({ length: Math.ceil(buf.length / size) }, (_, i) => buf.subarray(i * size, (i + 1) * size));

const count = async (tag: string) => {
  const r = await call(srv, s.token, 'GET', `/v1/events/?limit=1&metadata[tag]=${encodeURIComponent(tag)}`);
  expect(r.status).toBe(200);
  return r.body.pagination.total_count as number;
};

const stored = async (tag: string, sorting = 'timestamp') => {
  const r = await call(srv, s.token, 'GET', `/v1/events/?limit=100&sorting=${sorting}&metadata[tag]=${encodeURIComponent(tag)}`);
  expect(r.status).toBe(200);
  return (r.body.items as { name: string; timestamp: string; customer_id: string | null; external_customer_id: string | null; metadata: unknown }[]).map(
    (e) => ({ name: e.name, timestamp: e.timestamp, ...(e.customer_id ? { customer_id: e.customer_id } : { external_customer_id: e.external_customer_id }), metadata: e.metadata }),
  );
};

const BASE = Date.UTC(2025, 4, 1);
const event = (i: number, tag: string) => ({
  name: i % 2 ? `caf\u00e9 "q" \\ \u20ac ${i}` : 'api.call',
  timestamp: new Date(BASE + i * 1000).toISOString(),
  ...(i % 3 ? { customer_id: customer.id } : { external_customer_id: `ext-\u00fc-${i % 4}` }),
  metadata: { tag, tokens: 1234567 + i, ratio: -12, cached: i % 5 === 0, note: 'tab\there \u00e9 \u{1F600}' },
});
const events = (n: number, tag: string) => Array.from({ length: n }, (_, i) => event(i, tag));

/** Rows of the events table being copied right now (pg_stat_progress_copy of this database). */
const copying = async () =>
  Number(
    (
      await db.query<{ n: string }>(
        `select coalesce(sum(tuples_processed), 0) as n from pg_stat_progress_copy where datname = current_database() and relid = 'events'::regclass`,
      )
    ).rows[0]!.n,
  );

const waitFor = async (what: () => Promise<boolean>, ms = 20_000) => {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(20);
  }
};

describe('ingest read as the body arrives', () => {
  it('writes rows to PostgreSQL while the client is still sending, then stores the batch exactly', async () => {
    const tag = `live-${randomUUID().slice(0, 8)}`;
    const batch = events(2000, tag);
    const body = Buffer.from(JSON.stringify({ events: batch }));
    const half = Math.floor(body.length / 2);
    let seen = 0;
    const res = await send([body.subarray(0, half), body.subarray(half)], {
      between: async (i) => {
        if (i !== 1) return;
        await waitFor(async () => (seen = await copying()) > 0);
      },
    });
    expect(seen).toBeGreaterThan(0);
    expect(res).toEqual({ status: 200, body: { inserted: 2000 } });
    expect(await count(tag)).toBe(2000);
    expect(await stored(tag)).toEqual(batch.slice(0, 100));
  });

  it('stores a body split at every byte (inside strings, escapes, numbers and multi-byte characters) exactly', async () => {
    const tag = `split-${randomUUID().slice(0, 8)}`;
    const one = [event(1, tag), event(3, tag)];
    const body = Buffer.from(JSON.stringify({ events: one }).replace('"name":', '"name" :\n '));
    const answers: (Sent | 'aborted')[] = [];
    for (let k = 1; k < body.length; k++) answers.push(await send([body.subarray(0, k), body.subarray(k)], { gap: 2 }));
    expect(answers).toEqual(answers.map(() => ({ status: 200, body: { inserted: 2 } })));
    expect(answers).toHaveLength(body.length - 1);
    expect(await count(tag)).toBe(2 * (body.length - 1));
    // Oldest first: the first event of every batch; newest first: the second.
    const first = await stored(tag);
    expect(first).toHaveLength(100);
    expect(first).toEqual(first.map(() => one[0]));
    const second = await stored(tag, '-timestamp');
    expect(second).toHaveLength(100);
    expect(second).toEqual(second.map(() => one[1]));
  });

  it('a client slower than the streaming allowance gets the same answer and stores the batch', async () => {
    const tag = `slow-${randomUUID().slice(0, 8)}`;
    const body = Buffer.from(JSON.stringify({ events: events(500, tag) }));
    const res = await send(split(body, Math.ceil(body.length / 3)), { gap: 2_800 });
    expect(res).toEqual({ status: 200, body: { inserted: 500 } });
    expect(await count(tag)).toBe(500);
    expect(await connectionsStillLent(srv.deps, 10_000)).toEqual([]);
  });

  it('a request aborted mid-body keeps nothing and gives its connection back', async () => {
    const tag = `gone-${randomUUID().slice(0, 8)}`;
    const body = Buffer.from(JSON.stringify({ events: events(2000, tag) }));
    const half = Math.floor(body.length / 2);
    const res = await send([body.subarray(0, half), body.subarray(half)], {
      abortAt: 1,
      between: async (i) => {
        if (i === 1) await waitFor(async () => (await copying()) > 0);
      },
    });
    expect(res).toBe('aborted');
    await waitFor(async () => (await copying()) === 0);
    expect(await connectionsStillLent(srv.deps, 10_000)).toEqual([]);
    const open = await db.query(`select 1 from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`);
    expect(open.rowCount).toBe(0);
    expect(await count(tag)).toBe(0);
    // The API still ingests afterwards.
    const after = await call(srv, s.token, 'POST', '/v1/events/ingest', { events: events(3, tag) });
    expect(after).toEqual({ status: 200, body: { inserted: 3 } });
  });

  const late = (tag: string, bad: (e: Record<string, unknown>) => Record<string, unknown>) => {
    const list: Record<string, unknown>[] = events(1500, tag);
    list[1497] = bad(list[1497]!);
    return JSON.stringify({ events: list });
  };
  const refused: [string, (tag: string) => Buffer][] = [
    ['a truncated body', (tag) => Buffer.from(JSON.stringify({ events: events(1500, tag) }).slice(0, -3))],
    ['bytes after the closing brace', (tag) => Buffer.from(`${JSON.stringify({ events: events(1500, tag) })} x`)],
    ['an empty events array', () => Buffer.from('{"events": []}')],
    ['a scalar event', (tag) => Buffer.from(`{"events": [${JSON.stringify(event(0, tag))}, 7]}`)],
    ['nesting deeper than the limit', (tag) => Buffer.from(`{"events": [${JSON.stringify(event(0, tag))}, ${'['.repeat(70)}${']'.repeat(70)}]}`)],
    ['an event the schema refuses near the end', (tag) => Buffer.from(late(tag, (e) => ({ ...e, name: '' })))],
    ['NUL text near the end', (tag) => Buffer.from(late(tag, (e) => ({ ...e, metadata: { tag, bad: 'nul\u0000here' } })))],
    ['a future timestamp near the end', (tag) => Buffer.from(late(tag, (e) => ({ ...e, timestamp: '2999-01-01T00:00:00Z' })))],
    ['an unknown customer near the end', (tag) => Buffer.from(late(tag, (e) => ({ ...e, customer_id: randomUUID(), external_customer_id: undefined })))],
    ['a body over 1 MiB', (tag) => Buffer.from(JSON.stringify({ events: events(6000, tag) }))],
  ];

  it.each(refused)('%s: the answer of the whole-body parser, nothing kept', async (_name, make) => {
    const tag = `bad-${randomUUID().slice(0, 8)}`;
    const body = make(tag);
    const streamed = await send(split(body, 4093), { gap: 1 });
    const whole = await sendWhole(body);
    expect(streamed).not.toBe('aborted');
    expect((streamed as Sent).status).toBeGreaterThanOrEqual(400);
    expect(streamed).toEqual(whole);
    expect(await count(tag)).toBe(0);
  });

  const takenByTheParser: [string, (tag: string) => Buffer][] = [
    ['a second key (the schema drops it)', (tag) => Buffer.from(`${JSON.stringify({ events: events(1500, tag) }).slice(0, -1)}, "more": 1}`)],
    ['a byte-order mark (the parser skips it)', (tag) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ events: events(3, tag) }))])],
  ];

  it.each(takenByTheParser)('%s: accepted as the whole-body parser accepts it', async (_name, make) => {
    const a = `other-a-${randomUUID().slice(0, 8)}`;
    const b = `other-b-${randomUUID().slice(0, 8)}`;
    const streamed = await send(split(make(a), 4093), { gap: 1 });
    const whole = await sendWhole(make(b));
    expect(streamed).toEqual({ status: 200, body: { inserted: await count(a) } });
    expect(whole).toEqual(streamed);
    expect(await count(b)).toBe(await count(a));
  });

  it('invalid UTF-8 in a name is stored as the whole-body parser decodes it', async () => {
    const withBadName = (tag: string) => {
      const buf = Buffer.from(JSON.stringify({ events: [event(0, tag), { ...event(1, tag), name: 'XX' }] }));
      const at = buf.indexOf('"XX"') + 1;
      buf[at] = 0xc3;
      buf[at + 1] = 0x28;
      return buf;
    };
    const a = `utf-a-${randomUUID().slice(0, 8)}`;
    const b = `utf-b-${randomUUID().slice(0, 8)}`;
    expect(await send(split(withBadName(a), 7), { gap: 1 })).toEqual({ status: 200, body: { inserted: 2 } });
    expect(await sendWhole(withBadName(b))).toEqual({ status: 200, body: { inserted: 2 } });
    const names = async (tag: string) => (await stored(tag)).map((e) => e.name);
    expect(await names(a)).toEqual(['api.call', '\uFFFD(']);
    expect(await names(a)).toEqual(await names(b));
  });

  it('an accepted body gives the same answer both ways', async () => {
    const a = `same-a-${randomUUID().slice(0, 8)}`;
    const b = `same-b-${randomUUID().slice(0, 8)}`;
    const streamed = await send(split(Buffer.from(JSON.stringify({ events: events(700, a) })), 1000), { gap: 1 });
    const whole = await sendWhole(Buffer.from(JSON.stringify({ events: events(700, b) })));
    expect(streamed).toEqual({ status: 200, body: { inserted: 700 } });
    expect(whole).toEqual(streamed);
    expect((await stored(a)).map((e) => ({ ...e, metadata: { ...(e.metadata as object), tag: '' } }))).toEqual(
      (await stored(b)).map((e) => ({ ...e, metadata: { ...(e.metadata as object), tag: '' } })),
    );
    expect(await connectionsStillLent(srv.deps, 10_000)).toEqual([]);
  });
});
