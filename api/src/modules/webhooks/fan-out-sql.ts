/**
 * The outbox fan-out with one statement per batch when no endpoint subscribes to the batch's events
 * (an organization without webhook endpoints, or endpoints that take other types): the claim, the
 * check for subscribers and the mark as dispatched are one `UPDATE` in autocommit, and the events' JSON
 * payloads are never read. The events some endpoint does subscribe to stay undispatched in that
 * statement and are fanned out by `fanOutOutbox` (one transaction, as before), claimed again by id.
 * The answer is `fanOutOutbox`'s: events dispatched, webhook events created, whether the claim was full.
 * tests/webhooks/fan-out-sql.test.ts keeps both paths equal on the same outbox.
 */
import type { EntityManager } from '../../kit/db.ts';
import { runSql } from '../events/sql.ts';
import { fanOutOutbox } from './fan-out.ts';

/**
 * One statement: claims up to `$1` undispatched events in insertion order (SKIP LOCKED, as the ORM
 * path), marks dispatched those no enabled, undeleted endpoint of their organization subscribes to,
 * and answers how many it claimed and the ids it left for the fan-out proper (in insertion order).
 */
const CLAIM_SQL = `with claimed as (
    select o.id, o.seq, exists (
        select 1 from webhook_endpoints e
        where e.organization_id = o.organization_id and e.enabled and e.deleted_at is null and o.type = any(e.events)
      ) as subscribed
    from outbox_events o
    where o.dispatched_at is null
    order by o.seq
    limit $1
    for update of o skip locked),
  marked as (
    update outbox_events o set dispatched_at = now(), modified_at = now()
    from claimed c where o.id = c.id and not c.subscribed
    returning o.id)
  select (select count(*)::int from claimed) as claimed,
    (select count(*)::int from marked) as marked,
    coalesce((select array_agg(c.id order by c.seq) from claimed c where c.subscribed), '{}') as subscribed`;

/** Events this process marked in the one statement, and events it handed to `fanOutOutbox` (read by the equivalence test). */
export const fanOutSqlStats = { marked: 0, handedOver: 0 };

export async function fanOutOutboxSql(
  em: EntityManager,
  limit = 100,
  beforeCommit?: () => Promise<void>,
): Promise<{ dispatched: number; created: number; full: boolean }> {
  const { rows } = await runSql<{ claimed: number; marked: number; subscribed: string[] }>(em, CLAIM_SQL, [limit]);
  const { claimed, marked, subscribed } = rows[0]!;
  const full = claimed === limit;
  fanOutSqlStats.marked += marked;
  fanOutSqlStats.handedOver += subscribed.length;
  if (!subscribed.length) return { dispatched: marked, created: 0, full };
  const rest = await fanOutOutbox(em, subscribed.length, beforeCommit, subscribed);
  return { dispatched: marked + rest.dispatched, created: rest.created, full };
}
