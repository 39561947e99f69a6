import { Migration } from '@mikro-orm/migrations';

export class Migration20261126114500 extends Migration {

  override name = 'Migration20261126114500';

  // Two more meter rollups (api/src/modules/meters/rollups.ts), kept by the same merge and rebuild
  // as the hourly rows: per meter, UTC day and customer ("meter_rollup_days": one customer's whole
  // days read one row each instead of 24), and per meter and UTC minute without the customer
  // ("meter_rollup_minutes": the partial hours at the ends of an all-customers range read minutes,
  // raw events only for the partial minutes). Every built meter is marked for a rebuild (rollup
  // null), which fills both from the raw events on its next read or change.
  override up(): void | Promise<void> {
    this.addSql(`create table "meter_rollup_days" ("id" bigserial primary key, "meter_id" uuid not null, "day" timestamptz not null, "customer_id" uuid null, "external_customer_id" varchar(255) null, "n" bigint not null, "vn" bigint not null, "vsum" numeric not null, "vmin" numeric null, "vmax" numeric null) with (fillfactor = 80);`);
    this.addSql(`create unique index "meter_rollup_days_key_unique" on "meter_rollup_days" ("meter_id", "day", "customer_id", "external_customer_id") nulls not distinct;`);
    this.addSql(`create index "meter_rollup_days_meter_customer_day_index" on "meter_rollup_days" ("meter_id", "customer_id", "day");`);
    this.addSql(`create index "meter_rollup_days_meter_external_customer_day_index" on "meter_rollup_days" ("meter_id", "external_customer_id", "day");`);
    this.addSql(`alter table "meter_rollup_days" add constraint "meter_rollup_days_meter_id_foreign" foreign key ("meter_id") references "meters" ("id") on delete cascade;`);

    this.addSql(`create table "meter_rollup_minutes" ("id" bigserial primary key, "meter_id" uuid not null, "minute" timestamptz not null, "n" bigint not null, "vn" bigint not null, "vsum" numeric not null, "vmin" numeric null, "vmax" numeric null) with (fillfactor = 80);`);
    this.addSql(`alter table "meter_rollup_minutes" add constraint "meter_rollup_minutes_meter_minute_unique" unique ("meter_id", "minute");`);
    this.addSql(`alter table "meter_rollup_minutes" add constraint "meter_rollup_minutes_meter_id_foreign" foreign key ("meter_id") references "meters" ("id") on delete cascade;`);

    this.addSql(`update "meters" set "rollup" = null where "rollup" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "meter_rollup_days" cascade;`);
    this.addSql(`drop table if exists "meter_rollup_minutes" cascade;`);
  }

}
