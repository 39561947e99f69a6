/**
 * The outbox fan-out with one statement for unsubscribed events (webhooks/fan-out-sql.ts) against the
 * ORM fan-out (fan-out.ts) on identical outboxes: two organizations, one with endpoints (raw and
 * slack, each subscribed to some types, one disabled, one deleted) and one without. Both paths,
 * called in batches of 3 until nothing is left, must give the same answers per batch, mark the same
 * events dispatched and write the same webhook events (endpoint, event, type, exact payload, state),
 * with the outbox events' ids masked.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fanOutOutbox } from '../../api/src/modules/webhooks/fan-out.ts';
import { fanOutOutboxSql, fanOutSqlStats } from '../../api/src/modules/webhooks/fan-out-sql.ts';
import { seller, startTestServer, type TestServer } from '../harness.ts';
import { masked } from '../masking.ts';

let srv: TestServer;
let withEndpoints: string;
let without: string;
const endpoints: Record<string, string> = {};

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  withEndpoints = (await seller(srv.url)).organization.id;
  without = (await seller(srv.url)).organization.id;
  const em = srv.deps.orm.em.fork();
  const rows: [string, string, string[], boolean, boolean][] = [
    ['raw', 'raw', ['order.created', 'order.paid', 'customer.state_changed'], true, false],
    ['slack', 'slack', ['order.paid'], true, false],
    ['disabled', 'raw', ['order.created', 'order.paid', 'checkout.updated'], false, false],
    ['deleted', 'discord', ['order.created', 'checkout.updated'], true, true],
  ];
  for (const [name, format, events, enabled, deleted] of rows) {
    const id = randomUUID();
    endpoints[id] = name;
    await em.execute(
      `insert into webhook_endpoints (id, created_at, organization_id, url, format, secret_sealed, events, enabled, deleted_at)
       values (?, now(), ?, ?, ?, 'sealed', ?::text[], ?, ?)`,
      [id, withEndpoints, `https://example.com/${name}`, format, `{${events.join(',')}}`, enabled, deleted ? new Date() : null],
    );
  }
});
afterAll(async () => {
  await srv?.close();
});

/** The outbox: [organization, type, the resource's id]. */
const OUTBOX = (): [string, string, string][] => [
  [without, 'order.created', 'o1'],
  [withEndpoints, 'order.created', 'o2'],
  [withEndpoints, 'checkout.updated', 'c2'],
  [without, 'order.paid', 'o1'],
  [withEndpoints, 'order.paid', 'o2'],
  [withEndpoints, 'customer.state_changed', 'cu2'],
  [without, 'customer.state_changed', 'cu1'],
  [withEndpoints, 'benefit_grant.created', 'g2'],
];

type FanOut = typeof fanOutOutbox;

async function side(fanOut: FanOut) {
  const em = srv.deps.orm.em.fork();
  await em.execute(`delete from webhook_events`);
  await em.execute(`delete from outbox_events`);
  for (const [i, [org, type, id]] of OUTBOX().entries()) {
    await em.execute(
      `insert into outbox_events (id, created_at, organization_id, type, data) values (?, ?, ?, ?, ?::jsonb)`,
      [randomUUID(), new Date(Date.UTC(2026, 10, 26, 12, 0, i)), org, type, JSON.stringify({ id, n: i, nested: { b: 1, a: [i] } })],
    );
  }
  const answers = [];
  for (;;) {
    const r = await fanOut(srv.deps.orm.em.fork(), 3);
    answers.push(r);
    if (!r.dispatched) break;
  }
  const outbox = await em.execute<{ id: string }[]>(
    `select id, organization_id = ? as subscribed_org, type, dispatched_at is not null as dispatched, modified_at is not null as modified from outbox_events order by seq`,
    [withEndpoints],
  );
  const index = new Map(outbox.map((o, i) => [o.id, i]));
  const events = await em.execute<{ outbox_event_id: string; endpoint_id: string; payload: string; [column: string]: unknown }[]>(
    `select w.outbox_event_id, w.endpoint_id, w.type, w.payload, w.succeeded, w.last_http_code, w.attempts, w.claimed_until, w.retry_started_at, o.seq
       from webhook_events w join outbox_events o on o.id = w.outbox_event_id order by o.seq, w.endpoint_id`,
  );
  const webhookEvents = events
    .map(({ outbox_event_id, endpoint_id, ...rest }) => ({ ...rest, event: index.get(outbox_event_id), endpoint: endpoints[endpoint_id], seq: undefined }))
    .sort((a, b) => a.event! - b.event! || a.endpoint!.localeCompare(b.endpoint!));
  return { answers, outbox: masked(outbox.map(({ id: _id, ...o }) => o), []), webhookEvents };
}

describe('the outbox fan-out in one statement for unsubscribed events', () => {
  it('answers and writes what the ORM fan-out does', async () => {
    const orm = await side(fanOutOutbox);
    const before = { ...fanOutSqlStats };
    const sql = await side(fanOutOutboxSql);
    expect(sql).toEqual(orm);
    // Only the three events a live endpoint subscribes to took the ORM's transaction; the five others one statement.
    expect({ marked: fanOutSqlStats.marked - before.marked, handedOver: fanOutSqlStats.handedOver - before.handedOver }).toEqual({ marked: 5, handedOver: 3 });
    // What both wrote, so that equal sides cannot both be empty.
    expect(orm.answers).toEqual([
      { dispatched: 3, created: 1, full: true },
      { dispatched: 3, created: 3, full: true },
      { dispatched: 2, created: 0, full: false },
      { dispatched: 0, created: 0, full: false },
    ]);
    expect(orm.webhookEvents.map((w) => `${w.event}:${w.endpoint}`)).toEqual(['1:raw', '4:raw', '4:slack', '5:raw']);
    expect(JSON.parse(orm.webhookEvents[0]!.payload)).toEqual(
      { type: 'order.created', timestamp: '2026-11-26T12:00:01.000Z', data: { id: 'o2', n: 1, nested: { a: [1], b: 1 } } },
    );
  });
});
