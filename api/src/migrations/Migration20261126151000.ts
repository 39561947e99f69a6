import { Migration } from '@mikro-orm/migrations';

export class Migration20261126151000 extends Migration {

  override name = 'Migration20261126151000';

  // The ids of the transactions that inserted events ("events_xids"), one row per transaction, written
  // by a statement-level trigger (once per INSERT or COPY, not per row; every event row's "xid" is
  // its inserting transaction's id by the column default). A quantities read first asks this small
  // table whether any transaction's events are not in the meter's rolled_snapshot yet, and scans
  // events_xid_brin (whose range summaries grow with the table) only when one is. The merge trims
  // the ids every built meter's rolled_snapshot already holds. Seeded with the ids of the events some
  // built meter may not hold yet (none of them older than the oldest rolled_snapshot's xmin).
  override up(): void | Promise<void> {
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

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "events_note_xid" on "events";`);
    this.addSql(`drop function if exists "events_note_xid"();`);
    this.addSql(`drop table if exists "events_xids";`);
  }

}
