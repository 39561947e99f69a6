import { Migration } from '@mikro-orm/migrations';

/**
 * `events_xids` keyed by organization: (organization_id, xid), one row per transaction and
 * organization whose events it inserted, written by the statement trigger from its transition table.
 *
 * Before, one row per transaction for every organization: a read asked whether any transaction was
 * missing from its meter's rolled_snapshot, and the merge of one organization could trim only below
 * the oldest rolled_snapshot of all. A meter of an organization that stopped ingesting keeps an old
 * snapshot (merges run after its own ingests), so every other organization's transactions since then
 * stayed in the table and counted as pending for that meter: each of its reads scanned the unmerged
 * tail, every event of every organization ingested since. Now a read looks at its own organization's
 * transactions only, and a merge trims its own organization's rows.
 */
export class Migration20261127113000 extends Migration {

  override name = 'Migration20261127113000';

  override up(): void | Promise<void> {
    this.addSql(`drop trigger "events_note_xid" on "events";`);
    this.addSql(`drop table "events_xids";`);
    this.addSql(`create table "events_xids" (
      "organization_id" uuid not null references "organizations" ("id") on delete cascade,
      "xid" bigint not null,
      constraint "events_xids_pkey" primary key ("organization_id", "xid"));`);
    this.addSql(`create or replace function "events_note_xid"() returns trigger language plpgsql as $$
      begin
        insert into "events_xids" ("organization_id", "xid")
          select distinct n."organization_id", pg_current_xact_id()::text::bigint from "inserted_events" n
          on conflict do nothing;
        return null;
      end $$;`);
    this.addSql(`create trigger "events_note_xid" after insert on "events" referencing new table as "inserted_events"
      for each statement execute function "events_note_xid"();`);
    // The transactions some built meter of the events' organization may not hold yet.
    this.addSql(`insert into "events_xids" ("organization_id", "xid")
      select distinct e."organization_id", e."xid"
      from "events" e
      join (select m."organization_id", min(pg_snapshot_xmin(m."rolled_snapshot")::text::bigint) as "xmin"
            from "meters" m where m."rolled_snapshot" is not null group by 1) b on b."organization_id" = e."organization_id"
      where e."xid" >= (select min(pg_snapshot_xmin(m."rolled_snapshot")::text::bigint) from "meters" m where m."rolled_snapshot" is not null)
        and e."xid" >= b."xmin"
      on conflict do nothing;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger "events_note_xid" on "events";`);
    this.addSql(`drop table "events_xids";`);
    this.addSql(`create table "events_xids" ("xid" bigint primary key);`);
    this.addSql(`create or replace function "events_note_xid"() returns trigger language plpgsql as $$
      begin
        insert into "events_xids" ("xid") values (pg_current_xact_id()::text::bigint) on conflict do nothing;
        return null;
      end $$;`);
    this.addSql(`create trigger "events_note_xid" after insert on "events" for each statement execute function "events_note_xid"();`);
    this.addSql(`insert into "events_xids" ("xid")
      select distinct e."xid" from "events" e
      where e."xid" >= (select min(pg_snapshot_xmin(m."rolled_snapshot")::text::bigint) from "meters" m where m."rolled_snapshot" is not null)
      on conflict do nothing;`);
  }

}
