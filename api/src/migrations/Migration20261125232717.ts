import { Migration } from '@mikro-orm/migrations';

export class Migration20261125232717 extends Migration {

  override name = 'Migration20261125232717';

  // Meter rollups merged after commit (api/src/modules/meters/rollups.ts): every event records the
  // id of the transaction that wrote it ("xid", a BRIN index serves the scan of the newest ones),
  // and each meter the snapshot whose visible events its rollups hold ("rolled_snapshot"). Events
  // from before this migration were already merged by the ingest statement: their xid stays null
  // and the built meters' snapshot starts at this migration.
  override up(): void | Promise<void> {
    this.addSql(`alter table "events" add column "xid" bigint null;`);
    this.addSql(`alter table "events" alter column "xid" set default (pg_current_xact_id()::text::bigint);`);
    this.addSql(`create index "events_xid_brin" on "events" using brin ("xid") with (pages_per_range = 16, autosummarize = on);`);
    this.addSql(`alter table "meters" add column "rolled_snapshot" pg_snapshot null;`);
    this.addSql(`update "meters" set "rolled_snapshot" = pg_current_snapshot() where "rollup" is not null;`);
    // Run by the ingest COPY's own transaction before the rows: any customer id that is not a live
    // customer of its event's organization fails it (SQLSTATE P0R02, the ids in DETAIL).
    this.addSql(`create or replace function "events_check_customers"(orgs uuid[], customer_ids uuid[]) returns void language plpgsql stable as $$
      declare bad text;
      begin
        select string_agg(distinct x.c::text, ',') into bad from unnest(orgs, customer_ids) x(o, c)
        where not exists (select 1 from "customers" k where k."id" = x.c and k."organization_id" = x.o and k."deleted_at" is null);
        if bad is not null then
          raise exception 'unknown customers' using errcode = 'P0R02', detail = bad;
        end if;
      end $$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function if exists "events_check_customers"(uuid[], uuid[]);`);
    this.addSql(`alter table "meters" drop column "rolled_snapshot";`);
    this.addSql(`drop index if exists "events_xid_brin";`);
    this.addSql(`alter table "events" drop column "xid";`);
  }

}
