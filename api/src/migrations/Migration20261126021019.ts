import { Migration } from '@mikro-orm/migrations';

export class Migration20261126021019 extends Migration {

  override name = 'Migration20261126021019';

  // Meter rollups without the customer dimension (api/src/modules/meters/rollups.ts): one row per
  // meter and UTC hour, the sum of that hour's meter_rollups rows, kept by the same merge and
  // rebuild; quantities without a customer filter read these. Rows are merged in place (fillfactor
  // 80 keeps those updates HOT). Backfilled from the existing per-customer rows.
  override up(): void | Promise<void> {
    this.addSql(`create table "meter_rollup_totals" ("id" bigserial primary key, "meter_id" uuid not null, "hour" timestamptz not null, "n" bigint not null, "vn" bigint not null, "vsum" numeric not null, "vmin" numeric null, "vmax" numeric null) with (fillfactor = 80);`);
    this.addSql(`alter table "meter_rollup_totals" add constraint "meter_rollup_totals_meter_hour_unique" unique ("meter_id", "hour");`);
    this.addSql(`alter table "meter_rollup_totals" add constraint "meter_rollup_totals_meter_id_foreign" foreign key ("meter_id") references "meters" ("id") on delete cascade;`);
    this.addSql(`insert into "meter_rollup_totals" ("meter_id", "hour", "n", "vn", "vsum", "vmin", "vmax")
      select "meter_id", "hour", sum("n"), sum("vn"), sum("vsum"), min("vmin"), max("vmax") from "meter_rollups" group by 1, 2 order by 1, 2;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "meter_rollup_totals" cascade;`);
  }

}
