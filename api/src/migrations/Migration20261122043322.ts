import { Migration } from '@mikro-orm/migrations';

export class Migration20261122043322 extends Migration {

  override name = 'Migration20261122043322';

  override up(): void | Promise<void> {
    this.addSql(`create table "refunds" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "order_id" uuid not null, "subscription_id" uuid null, "customer_id" uuid not null, "status" text not null, "reason" text not null, "amount" int not null, "tax_amount" int not null, "currency" varchar(3) not null, "comment" text null, "revoke_benefits" boolean not null, "metadata" jsonb not null, "processor_refund_id" varchar(255) null, "failure_reason" text null, primary key ("id"));`);
    this.addSql(`create index "refunds_organization_id_index" on "refunds" ("organization_id");`);
    this.addSql(`create index "refunds_order_id_index" on "refunds" ("order_id");`);
    this.addSql(`create index "refunds_subscription_id_index" on "refunds" ("subscription_id");`);
    this.addSql(`create index "refunds_customer_id_index" on "refunds" ("customer_id");`);

    this.addSql(`alter table "refunds" add constraint "refunds_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "refunds" add constraint "refunds_order_id_foreign" foreign key ("order_id") references "orders" ("id") on delete cascade;`);
    this.addSql(`alter table "refunds" add constraint "refunds_subscription_id_foreign" foreign key ("subscription_id") references "subscriptions" ("id") on delete set null;`);
    this.addSql(`alter table "refunds" add constraint "refunds_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on delete cascade;`);
    this.addSql(`alter table "refunds" add constraint "refunds_status_check" check ("status" in ('pending', 'succeeded', 'failed', 'canceled'));`);
    this.addSql(`alter table "refunds" add constraint "refunds_reason_check" check ("reason" in ('duplicate', 'fraudulent', 'customer_request', 'service_disruption', 'satisfaction_guarantee', 'other'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "refunds" cascade;`);
  }

}
