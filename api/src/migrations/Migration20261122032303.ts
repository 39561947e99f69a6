import { Migration } from '@mikro-orm/migrations';

export class Migration20261122032303 extends Migration {

  override name = 'Migration20261122032303';

  override up(): void | Promise<void> {
    this.addSql(`create table "payment_methods" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "customer_id" uuid not null, "processor" varchar(255) not null, "processor_id" varchar(255) not null, "type" varchar(255) not null default 'card', "brand" varchar(255) not null, "last4" varchar(255) not null, "exp_month" int not null, "exp_year" int not null, "wallet" varchar(255) null, "is_default" boolean not null default false, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "payment_methods_customer_id_index" on "payment_methods" ("customer_id");`);
    this.addSql(`alter table "payment_methods" add constraint "payment_methods_processor_id_unique" unique ("processor", "processor_id");`);

    this.addSql(`create table "discount_redemptions" ("id" uuid not null, "discount_id" uuid not null, "checkout_id" uuid not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "discount_redemptions_discount_id_index" on "discount_redemptions" ("discount_id");`);
    this.addSql(`alter table "discount_redemptions" add constraint "discount_redemptions_checkout_id_unique" unique ("checkout_id");`);

    this.addSql(`create table "subscriptions" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "customer_id" uuid not null, "product_id" uuid not null, "price_id" uuid not null, "discount_id" uuid null, "checkout_id" uuid null, "amount" int not null, "currency" varchar(3) not null, "recurring_interval" text not null, "status" text not null, "current_period_start" timestamptz not null, "current_period_end" timestamptz null, "cancel_at_period_end" boolean not null default false, "canceled_at" timestamptz null, "started_at" timestamptz null, "ends_at" timestamptz null, "ended_at" timestamptz null, "customer_cancellation_reason" text null, "customer_cancellation_comment" text null, "payment_method_id" uuid null, "metadata" jsonb not null, primary key ("id"));`);
    this.addSql(`create index "subscriptions_organization_id_index" on "subscriptions" ("organization_id");`);
    this.addSql(`create index "subscriptions_customer_id_index" on "subscriptions" ("customer_id");`);
    this.addSql(`create index "subscriptions_product_id_index" on "subscriptions" ("product_id");`);
    this.addSql(`create index "subscriptions_price_id_index" on "subscriptions" ("price_id");`);
    this.addSql(`create index "subscriptions_discount_id_index" on "subscriptions" ("discount_id");`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_checkout_id_unique" unique ("checkout_id");`);
    this.addSql(`create index "subscriptions_payment_method_id_index" on "subscriptions" ("payment_method_id");`);

    this.addSql(`create table "orders" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "customer_id" uuid not null, "product_id" uuid not null, "product_price_id" uuid not null, "discount_id" uuid null, "subscription_id" uuid null, "checkout_id" uuid null, "status" text not null, "billing_reason" text not null, "subtotal_amount" int not null, "discount_amount" int not null, "net_amount" int not null, "tax_amount" int not null, "total_amount" int not null, "refunded_amount" int not null default 0, "refunded_tax_amount" int not null default 0, "currency" varchar(3) not null, "billing_address" jsonb null, "custom_field_data" jsonb not null, "metadata" jsonb not null, "processor_charge_id" varchar(255) null, primary key ("id"));`);
    this.addSql(`create index "orders_organization_id_index" on "orders" ("organization_id");`);
    this.addSql(`create index "orders_customer_id_index" on "orders" ("customer_id");`);
    this.addSql(`create index "orders_product_id_index" on "orders" ("product_id");`);
    this.addSql(`create index "orders_product_price_id_index" on "orders" ("product_price_id");`);
    this.addSql(`create index "orders_discount_id_index" on "orders" ("discount_id");`);
    this.addSql(`create index "orders_subscription_id_index" on "orders" ("subscription_id");`);
    this.addSql(`alter table "orders" add constraint "orders_checkout_id_unique" unique ("checkout_id");`);

    this.addSql(`alter table "customers" add "processor_customer_id" varchar(255) null;`);

    this.addSql(`alter table "checkouts" add "processor_charge_id" varchar(255) null, add "processor_payment_method" jsonb null;`);

    this.addSql(`alter table "payment_methods" add constraint "payment_methods_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on delete cascade;`);

    this.addSql(`alter table "discount_redemptions" add constraint "discount_redemptions_discount_id_foreign" foreign key ("discount_id") references "discounts" ("id") on delete cascade;`);
    this.addSql(`alter table "discount_redemptions" add constraint "discount_redemptions_checkout_id_foreign" foreign key ("checkout_id") references "checkouts" ("id") on delete cascade;`);

    this.addSql(`alter table "subscriptions" add constraint "subscriptions_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on delete cascade;`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_product_id_foreign" foreign key ("product_id") references "products" ("id") on delete cascade;`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_price_id_foreign" foreign key ("price_id") references "product_prices" ("id") on delete cascade;`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_discount_id_foreign" foreign key ("discount_id") references "discounts" ("id") on delete set null;`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_checkout_id_foreign" foreign key ("checkout_id") references "checkouts" ("id") on delete set null;`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_payment_method_id_foreign" foreign key ("payment_method_id") references "payment_methods" ("id") on delete set null;`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_recurring_interval_check" check ("recurring_interval" in ('month', 'year'));`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_status_check" check ("status" in ('incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'canceled', 'unpaid'));`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_customer_cancellation_reason_check" check ("customer_cancellation_reason" in ('customer_service', 'low_quality', 'missing_features', 'switched_service', 'too_complex', 'too_expensive', 'unused', 'other'));`);

    this.addSql(`alter table "orders" add constraint "orders_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "orders" add constraint "orders_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on delete cascade;`);
    this.addSql(`alter table "orders" add constraint "orders_product_id_foreign" foreign key ("product_id") references "products" ("id") on delete cascade;`);
    this.addSql(`alter table "orders" add constraint "orders_product_price_id_foreign" foreign key ("product_price_id") references "product_prices" ("id") on delete cascade;`);
    this.addSql(`alter table "orders" add constraint "orders_discount_id_foreign" foreign key ("discount_id") references "discounts" ("id") on delete set null;`);
    this.addSql(`alter table "orders" add constraint "orders_subscription_id_foreign" foreign key ("subscription_id") references "subscriptions" ("id") on delete set null;`);
    this.addSql(`alter table "orders" add constraint "orders_checkout_id_foreign" foreign key ("checkout_id") references "checkouts" ("id") on delete set null;`);
    this.addSql(`alter table "orders" add constraint "orders_status_check" check ("status" in ('pending', 'paid', 'refunded', 'partially_refunded'));`);
    this.addSql(`alter table "orders" add constraint "orders_billing_reason_check" check ("billing_reason" in ('purchase', 'subscription_create', 'subscription_cycle', 'subscription_update'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "subscriptions" drop constraint "subscriptions_payment_method_id_foreign";`);
    this.addSql(`alter table "orders" drop constraint "orders_subscription_id_foreign";`);

    this.addSql(`drop table if exists "payment_methods" cascade;`);
    this.addSql(`drop table if exists "discount_redemptions" cascade;`);
    this.addSql(`drop table if exists "subscriptions" cascade;`);
    this.addSql(`drop table if exists "orders" cascade;`);

    this.addSql(`alter table "checkouts" drop column "processor_charge_id", drop column "processor_payment_method";`);

    this.addSql(`alter table "customers" drop column "processor_customer_id";`);

  }

}
