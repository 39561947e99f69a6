import { Migration } from '@mikro-orm/migrations';

export class Migration20261125103014 extends Migration {

  override name = 'Migration20261125103014';

  override up(): void | Promise<void> {
    this.addSql(`create table "checkout_charge_attempts" ("id" uuid not null, "checkout_id" uuid not null, "idempotency_key" varchar(255) not null, "request" jsonb not null, "status" text not null default 'pending', "charge_id" varchar(255) null, "created_at" timestamptz not null, "settled_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "checkout_charge_attempts_checkout_id_index" on "checkout_charge_attempts" ("checkout_id");`);
    this.addSql(`alter table "checkout_charge_attempts" add constraint "checkout_charge_attempts_idempotency_key_unique" unique ("idempotency_key");`);
    this.addSql(`create index "checkout_charge_attempts_unsettled_index" on "checkout_charge_attempts" ("created_at") where "status" in ('pending', 'refunding');`);

    this.addSql(`alter table "checkout_charge_attempts" add constraint "checkout_charge_attempts_checkout_id_foreign" foreign key ("checkout_id") references "checkouts" ("id") on delete cascade;`);
    this.addSql(`alter table "checkout_charge_attempts" add constraint "checkout_charge_attempts_status_check" check ("status" in ('pending', 'declined', 'confirmed', 'refunding', 'refunded'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "checkout_charge_attempts" cascade;`);
  }

}
