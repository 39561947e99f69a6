import { Migration } from '@mikro-orm/migrations';

export class Migration20261122021617 extends Migration {

  override name = 'Migration20261122021617';

  override up(): void | Promise<void> {
    this.addSql(`create table "external_organizations" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "platform" text not null, "name" varchar(255) not null, "avatar_url" text not null, "is_personal" boolean not null default false, "bio" text null, "pretty_name" varchar(255) null, "company" varchar(255) null, "blog" varchar(255) null, "location" varchar(255) null, "email" varchar(255) null, "twitter_username" varchar(255) null, "organization_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "external_organizations_organization_id_index" on "external_organizations" ("organization_id");`);
    this.addSql(`alter table "external_organizations" add constraint "external_organizations_platform_name_unique" unique ("platform", "name");`);

    this.addSql(`create table "discounts" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "name" varchar(255) not null, "code" varchar(256) null, "type" text not null, "duration" text not null, "duration_in_months" int null, "amount" int null, "currency" varchar(3) null, "basis_points" int null, "starts_at" timestamptz null, "ends_at" timestamptz null, "max_redemptions" int null, "redemptions_count" int not null default 0, "metadata" jsonb not null, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "discounts_organization_id_index" on "discounts" ("organization_id");`);
    this.addSql(`create unique index "discounts_organization_code_live_unique" on "discounts" ("organization_id", lower("code")) where "deleted_at" is null and "code" is not null;`);

    this.addSql(`create table "customer_sessions" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "customer_id" uuid not null, "token_hash" varchar(255) not null, "expires_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "customer_sessions_customer_id_index" on "customer_sessions" ("customer_id");`);
    this.addSql(`alter table "customer_sessions" add constraint "customer_sessions_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "customer_sessions_expires_at_index" on "customer_sessions" ("expires_at");`);

    this.addSql(`create table "discount_products" ("discount_id" uuid not null, "product_id" uuid not null, primary key ("discount_id", "product_id"));`);

    this.addSql(`create table "checkout_links" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "client_secret" varchar(255) not null, "payment_processor" varchar(255) not null default 'stripe', "label" varchar(255) null, "allow_discount_codes" boolean not null default true, "discount_id" uuid null, "success_url" text null, "metadata" jsonb not null, "product_price_id" uuid null, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "checkout_links_organization_id_index" on "checkout_links" ("organization_id");`);
    this.addSql(`alter table "checkout_links" add constraint "checkout_links_client_secret_unique" unique ("client_secret");`);
    this.addSql(`create index "checkout_links_discount_id_index" on "checkout_links" ("discount_id");`);
    this.addSql(`create index "checkout_links_product_price_id_index" on "checkout_links" ("product_price_id");`);

    this.addSql(`create table "checkout_link_products" ("id" serial primary key, "checkout_link_id" uuid not null, "product_id" uuid not null);`);

    this.addSql(`create table "repositories" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "platform" text not null, "external_organization_id" uuid not null, "organization_id" uuid null, "name" varchar(255) not null, "description" text null, "stars" int null, "license" varchar(255) null, "homepage" text null, "is_private" boolean not null default false, "profile_settings" jsonb not null, primary key ("id"));`);
    this.addSql(`create index "repositories_external_organization_id_index" on "repositories" ("external_organization_id");`);
    this.addSql(`create index "repositories_organization_id_index" on "repositories" ("organization_id");`);
    this.addSql(`alter table "repositories" add constraint "repositories_external_organization_id_name_unique" unique ("external_organization_id", "name");`);

    this.addSql(`alter table "external_organizations" add constraint "external_organizations_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete set null;`);
    this.addSql(`alter table "external_organizations" add constraint "external_organizations_platform_check" check ("platform" in ('github'));`);

    this.addSql(`alter table "discounts" add constraint "discounts_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "discounts" add constraint "discounts_type_check" check ("type" in ('fixed', 'percentage'));`);
    this.addSql(`alter table "discounts" add constraint "discounts_duration_check" check ("duration" in ('once', 'forever', 'repeating'));`);

    this.addSql(`alter table "customer_sessions" add constraint "customer_sessions_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on delete cascade;`);

    this.addSql(`alter table "discount_products" add constraint "discount_products_discount_id_foreign" foreign key ("discount_id") references "discounts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "discount_products" add constraint "discount_products_product_id_foreign" foreign key ("product_id") references "products" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "checkout_links" add constraint "checkout_links_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "checkout_links" add constraint "checkout_links_discount_id_foreign" foreign key ("discount_id") references "discounts" ("id") on delete set null;`);
    this.addSql(`alter table "checkout_links" add constraint "checkout_links_product_price_id_foreign" foreign key ("product_price_id") references "product_prices" ("id") on delete set null;`);

    this.addSql(`alter table "checkout_link_products" add constraint "checkout_link_products_checkout_link_id_foreign" foreign key ("checkout_link_id") references "checkout_links" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "checkout_link_products" add constraint "checkout_link_products_product_id_foreign" foreign key ("product_id") references "products" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "repositories" add constraint "repositories_external_organization_id_foreign" foreign key ("external_organization_id") references "external_organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "repositories" add constraint "repositories_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete set null;`);
    this.addSql(`alter table "repositories" add constraint "repositories_platform_check" check ("platform" in ('github'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "repositories" drop constraint "repositories_external_organization_id_foreign";`);
    this.addSql(`alter table "discount_products" drop constraint "discount_products_discount_id_foreign";`);
    this.addSql(`alter table "checkout_links" drop constraint "checkout_links_discount_id_foreign";`);
    this.addSql(`alter table "checkout_link_products" drop constraint "checkout_link_products_checkout_link_id_foreign";`);

    this.addSql(`drop table if exists "external_organizations" cascade;`);
    this.addSql(`drop table if exists "discounts" cascade;`);
    this.addSql(`drop table if exists "customer_sessions" cascade;`);
    this.addSql(`drop table if exists "discount_products" cascade;`);
    this.addSql(`drop table if exists "checkout_links" cascade;`);
    this.addSql(`drop table if exists "checkout_link_products" cascade;`);
    this.addSql(`drop table if exists "repositories" cascade;`);
  }

}
