import { Migration } from '@mikro-orm/migrations';

export class Migration20261125141406 extends Migration {

  override name = 'Migration20261125141406';

  // Meter rollups (issue #22): hourly pre-aggregates per meter and customer, kept at ingestion; rows
  // are merged in place, so a lower fillfactor keeps those updates HOT.
  override up(): void | Promise<void> {
    this.addSql(`create table "meter_rollups" ("id" bigserial primary key, "meter_id" uuid not null, "hour" timestamptz not null, "customer_id" uuid null, "external_customer_id" varchar(255) null, "n" bigint not null, "vn" bigint not null, "vsum" numeric not null, "vmin" numeric null, "vmax" numeric null) with (fillfactor = 80);`);
    this.addSql(`create unique index "meter_rollups_key_unique" on "meter_rollups" ("meter_id", "hour", "customer_id", "external_customer_id") nulls not distinct;`);
    this.addSql(`create index "meter_rollups_meter_customer_hour_index" on "meter_rollups" ("meter_id", "customer_id", "hour");`);
    this.addSql(`create index "meter_rollups_meter_external_customer_hour_index" on "meter_rollups" ("meter_id", "external_customer_id", "hour");`);

    this.addSql(`alter table "meters" add "rollup" jsonb null;`);

    this.addSql(`alter table "meter_rollups" add constraint "meter_rollups_meter_id_foreign" foreign key ("meter_id") references "meters" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "meter_rollups" cascade;`);

    this.addSql(`alter table "meters" drop column "rollup";`);
  }

}
