import { Migration } from '@mikro-orm/migrations';

export class Migration20261122025046 extends Migration {

  override name = 'Migration20261122025046';

  override up(): void | Promise<void> {
    this.addSql(`create table "checkouts" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "status" text not null default 'open', "client_secret" varchar(255) not null, "expires_at" timestamptz not null, "payment_processor" varchar(255) not null default 'stripe', "payment_processor_metadata" jsonb not null, "product_id" uuid not null, "product_price_id" uuid not null, "amount" int null, "discount_amount" int null, "net_amount" int null, "tax_amount" int null, "total_amount" int null, "currency" varchar(3) null, "is_discount_applicable" boolean not null default false, "is_free_product_price" boolean not null default false, "is_payment_required" boolean not null default false, "is_payment_setup_required" boolean not null default false, "is_payment_form_required" boolean not null default false, "discount_id" uuid null, "allow_discount_codes" boolean not null default true, "custom_field_data" jsonb not null, "customer_id" uuid null, "customer_external_id" varchar(255) null, "customer_name" varchar(255) null, "customer_email" varchar(255) null, "customer_ip_address" varchar(255) null, "customer_billing_address" jsonb null, "customer_tax_id" varchar(255) null, "customer_metadata" jsonb not null, "metadata" jsonb not null, "success_url" text null, "embed_origin" text null, "subscription_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "checkouts_organization_id_index" on "checkouts" ("organization_id");`);
    this.addSql(`alter table "checkouts" add constraint "checkouts_client_secret_unique" unique ("client_secret");`);
    this.addSql(`create index "checkouts_product_id_index" on "checkouts" ("product_id");`);
    this.addSql(`create index "checkouts_product_price_id_index" on "checkouts" ("product_price_id");`);
    this.addSql(`create index "checkouts_discount_id_index" on "checkouts" ("discount_id");`);
    this.addSql(`create index "checkouts_customer_id_index" on "checkouts" ("customer_id");`);

    this.addSql(`create table "checkout_products" ("id" serial primary key, "checkout_id" uuid not null, "product_id" uuid not null);`);

    this.addSql(`create table "tax_rates" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "country" varchar(2) not null, "basis_points" int not null, primary key ("id"));`);
    this.addSql(`alter table "tax_rates" add constraint "tax_rates_organization_country_unique" unique ("organization_id", "country");`);

    this.addSql(`alter table "checkouts" add constraint "checkouts_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "checkouts" add constraint "checkouts_product_id_foreign" foreign key ("product_id") references "products" ("id") on delete cascade;`);
    this.addSql(`alter table "checkouts" add constraint "checkouts_product_price_id_foreign" foreign key ("product_price_id") references "product_prices" ("id") on delete cascade;`);
    this.addSql(`alter table "checkouts" add constraint "checkouts_discount_id_foreign" foreign key ("discount_id") references "discounts" ("id") on delete set null;`);
    this.addSql(`alter table "checkouts" add constraint "checkouts_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on delete set null;`);
    this.addSql(`alter table "checkouts" add constraint "checkouts_status_check" check ("status" in ('open', 'expired', 'confirmed', 'succeeded', 'failed'));`);

    this.addSql(`alter table "checkout_products" add constraint "checkout_products_checkout_id_foreign" foreign key ("checkout_id") references "checkouts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "checkout_products" add constraint "checkout_products_product_id_foreign" foreign key ("product_id") references "products" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "tax_rates" add constraint "tax_rates_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "checkout_products" drop constraint "checkout_products_checkout_id_foreign";`);

    this.addSql(`drop table if exists "checkouts" cascade;`);
    this.addSql(`drop table if exists "checkout_products" cascade;`);
    this.addSql(`drop table if exists "tax_rates" cascade;`);

  }

}
