/**
 * POST /v1/events/ingest writes a plain batch's rows while it checks them (events/pipelined.ts). A
 * large batch is stored exactly; a batch refused late (after thousands of its rows already went to
 * PostgreSQL) answers the 422 the ordinary checks give, at the index of the bad event, and keeps
 * nothing; refused and accepted batches sent at once leave exactly the accepted ones.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, createCustomer, usageSeller } from '../catalogue/events-helpers.ts';

let srv: TestServer;
let s: Awaited<ReturnType<typeof usageSeller>>;
let other: Awaited<ReturnType<typeof usageSeller>>;
let customers: { id: string }[];
let foreign: { id: string };

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  s = await usageSeller(srv);
  other = await usageSeller(srv);
  customers = [await createCustomer(srv, s.organization.id), await createCustomer(srv, s.organization.id)];
  foreign = await createCustomer(srv, other.organization.id);
});
afterAll(async () => {
  await srv?.close();
});

const BASE = Date.UTC(2025, 2, 1);
const N = 3000;
/** Event i of a large batch (about 140 bytes of COPY text each: ~25 slices of it reach PostgreSQL before the last event is checked). */
const event = (i: number, tag: string) => ({
  name: i % 3 ? 'api.call' : 'upload',
  timestamp: new Date(BASE + i * 1000).toISOString(),
  ...(i % 4 ? { customer_id: customers[i % 2]!.id } : { external_customer_id: `ext-${i % 7}` }),
  metadata: { tag, tokens: i, cached: i % 5 === 0, model: `m\t${i % 3}` },
});
const batch = (tag: string) => Array.from({ length: N }, (_, i) => event(i, tag));

const stored = async (tag: string) => {
  const r = await call(srv, s.token, 'GET', `/v1/events/?limit=100&sorting=timestamp&metadata[tag]=${tag}`);
  expect(r.status).toBe(200);
  return r.body as { items: { name: string; timestamp: string; customer_id: string | null; external_customer_id: string | null; metadata: unknown }[]; pagination: { total_count: number } };
};

const LATE = N - 5;

describe('ingest of a plain batch, rows written while checked', () => {
  it('stores every event of a large batch exactly', async () => {
    const events = batch('whole');
    const res = await call(srv, s.token, 'POST', '/v1/events/ingest', { events });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ inserted: N });
    const page = await stored('whole');
    expect(page.pagination.total_count).toBe(N);
    expect(
      page.items.map((e) => ({
        name: e.name,
        timestamp: e.timestamp,
        ...(e.customer_id ? { customer_id: e.customer_id } : { external_customer_id: e.external_customer_id }),
        metadata: e.metadata,
      })),
    ).toEqual(events.slice(0, 100));
  });

  const late: [string, (e: Record<string, unknown>) => Record<string, unknown>, () => unknown][] = [
    [
      'an event the schema refuses',
      (e) => ({ ...e, name: '' }),
      () => [{ type: 'too_small', loc: ['body', 'events', LATE, 'name'], msg: 'Too small: expected string to have >=1 characters', input: '' }],
    ],
    [
      'text PostgreSQL cannot store',
      (e) => ({ ...e, metadata: { bad: 'nul\u0000here' } }),
      () => [{ type: 'string_unstorable', loc: ['body', 'events', LATE, 'metadata', 'bad'], msg: 'Text must not contain NUL characters or unpaired surrogates' }],
    ],
    [
      'a timestamp in the future',
      (e) => ({ ...e, timestamp: '2999-01-01T00:00:00Z' }),
      () => [{ type: 'value_error', loc: ['body', 'events', LATE, 'timestamp'], msg: 'Timestamp must be in the past.', input: '2999-01-01T00:00:00Z' }],
    ],
    [
      'an organization_id with an organization token',
      (e) => ({ ...e, organization_id: s.organization.id }),
      () => [
        {
          type: 'value_error',
          loc: ['body', 'events', LATE, 'organization_id'],
          msg: 'Setting organization_id is disallowed when using an organization token.',
          input: s.organization.id,
        },
      ],
    ],
  ];

  for (const [what, spoil, detail] of late) {
    it(`refuses a batch with ${what} near its end: the ordinary 422 at that index, nothing kept`, async () => {
      const tag = `late-${randomUUID().slice(0, 8)}`;
      const events: Record<string, unknown>[] = batch(tag);
      events[LATE] = spoil(events[LATE]!);
      const res = await call(srv, s.token, 'POST', '/v1/events/ingest', { events });
      expect(res.status).toBe(422);
      expect(res.body.error).toBe('RequestValidationError');
      expect(
        res.body.detail.map((d: Record<string, unknown>) => ({ type: d.type, loc: d.loc, msg: d.msg, ...('input' in d ? { input: d.input } : {}) })),
      ).toEqual(detail());
      expect((await stored(tag)).pagination.total_count).toBe(0);
    });
  }

  it('refuses customers that are unknown or of another organization, near the end, at their indexes, nothing kept', async () => {
    const tag = `cust-${randomUUID().slice(0, 8)}`;
    const events: Record<string, unknown>[] = batch(tag);
    const unknown = randomUUID();
    events[LATE] = { ...events[LATE], customer_id: unknown, external_customer_id: undefined };
    events[N - 1] = { ...events[N - 1], customer_id: foreign.id, external_customer_id: undefined };
    const res = await call(srv, s.token, 'POST', '/v1/events/ingest', { events });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      { type: 'value_error', loc: ['body', 'events', LATE, 'customer_id'], msg: 'Customer does not exist.', input: unknown },
      { type: 'value_error', loc: ['body', 'events', N - 1, 'customer_id'], msg: 'Customer does not exist.', input: foreign.id },
    ]);
    expect((await stored(tag)).pagination.total_count).toBe(0);
  });

  it('keeps exactly the accepted batches when refused and accepted ones are sent at once', async () => {
    const tags = Array.from({ length: 12 }, (_, k) => `mix${k}-${randomUUID().slice(0, 6)}`);
    const answers = await Promise.all(
      tags.map((tag, k) => {
        const events: Record<string, unknown>[] = batch(tag).slice(0, 1500);
        if (k % 3 === 0) events[1490] = { ...events[1490], customer_id: randomUUID(), external_customer_id: undefined };
        return call(srv, s.token, 'POST', '/v1/events/ingest', { events });
      }),
    );
    expect(answers.map((a) => a.status)).toEqual(tags.map((_, k) => (k % 3 === 0 ? 422 : 200)));
    const counts = await Promise.all(tags.map(async (tag) => (await stored(tag)).pagination.total_count));
    expect(counts).toEqual(tags.map((_, k) => (k % 3 === 0 ? 0 : 1500)));
    // The pool is whole afterwards: a small batch still goes through.
    const after = await call(srv, s.token, 'POST', '/v1/events/ingest', { events: [event(1, 'after')] });
    expect(after.status).toBe(200);
    expect(after.body).toEqual({ inserted: 1 });
  });
});
