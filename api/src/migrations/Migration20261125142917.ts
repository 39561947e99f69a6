import { Migration } from '@mikro-orm/migrations';

/** Usage billing (issue #19): metered_billings (what each renewal billed per meter) and orders.lines. */
export class Migration20261125142917 extends Migration {

  override name = 'Migration20261125142917';

  override up(): void | Promise<void> {
    this.addSql(`create table "metered_billings" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "subscription_id" uuid not null, "customer_id" uuid not null, "meter_id" uuid not null, "price_id" uuid not null, "order_id" uuid null, "period_start" timestamptz not null, "period_end" timestamptz not null, "billed_through" timestamptz not null, "usage" numeric not null, "credits_used" numeric not null, "billable_units" numeric not null, "unit_amount" numeric not null, "cap_amount" int null, "amount" int not null, primary key ("id"));`);
    this.addSql(`create index "metered_billings_order_id_index" on "metered_billings" ("order_id");`);
    this.addSql(`create index "metered_billings_customer_meter_index" on "metered_billings" ("customer_id", "meter_id");`);
    this.addSql(`alter table "metered_billings" add constraint "metered_billings_subscription_meter_period_unique" unique ("subscription_id", "meter_id", "period_end");`);

    this.addSql(`alter table "orders" add "lines" jsonb null;`);

    this.addSql(`alter table "metered_billings" add constraint "metered_billings_subscription_id_foreign" foreign key ("subscription_id") references "subscriptions" ("id") on delete cascade;`);
    this.addSql(`alter table "metered_billings" add constraint "metered_billings_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on delete cascade;`);
    this.addSql(`alter table "metered_billings" add constraint "metered_billings_meter_id_foreign" foreign key ("meter_id") references "meters" ("id") on delete cascade;`);
    this.addSql(`alter table "metered_billings" add constraint "metered_billings_price_id_foreign" foreign key ("price_id") references "product_prices" ("id") on delete cascade;`);
    this.addSql(`alter table "metered_billings" add constraint "metered_billings_order_id_foreign" foreign key ("order_id") references "orders" ("id") on delete set null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "metered_billings" cascade;`);

    this.addSql(`alter table "orders" drop column "lines";`);
  }

}
