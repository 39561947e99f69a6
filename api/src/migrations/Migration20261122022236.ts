import { Migration } from '@mikro-orm/migrations';

export class Migration20261122022236 extends Migration {

  override name = 'Migration20261122022236';

  override up(): void | Promise<void> {
    this.addSql(`create table "custom_fields" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "type" text not null, "slug" varchar(255) not null, "name" varchar(255) not null, "properties" jsonb not null, "metadata" jsonb not null, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "custom_fields_organization_id_index" on "custom_fields" ("organization_id");`);
    this.addSql(`create unique index "custom_fields_organization_slug_live_unique" on "custom_fields" ("organization_id", "slug") where "deleted_at" is null;`);

    this.addSql(`create table "benefits" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "type" text not null, "description" varchar(255) not null, "is_tax_applicable" boolean not null default false, "selectable" boolean not null default true, "deletable" boolean not null default true, "properties" jsonb not null, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "benefits_organization_id_index" on "benefits" ("organization_id");`);

    this.addSql(`create table "license_keys" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "customer_id" uuid not null, "benefit_id" uuid not null, "key" varchar(255) not null, "display_key" varchar(255) not null, "status" text not null default 'granted', "limit_activations" int null, "usage" int not null default 0, "limit_usage" int null, "validations" int not null default 0, "last_validated_at" timestamptz null, "expires_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "license_keys_organization_id_index" on "license_keys" ("organization_id");`);
    this.addSql(`create index "license_keys_customer_id_index" on "license_keys" ("customer_id");`);
    this.addSql(`create index "license_keys_benefit_id_index" on "license_keys" ("benefit_id");`);
    this.addSql(`alter table "license_keys" add constraint "license_keys_organization_id_key_unique" unique ("organization_id", "key");`);

    this.addSql(`create table "license_key_activations" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "license_key_id" uuid not null, "label" varchar(255) not null, "meta" jsonb not null, "conditions" jsonb not null, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "license_key_activations_license_key_id_index" on "license_key_activations" ("license_key_id");`);

    this.addSql(`create table "benefit_grants" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "customer_id" uuid not null, "benefit_id" uuid not null, "subscription_id" uuid null, "order_id" uuid null, "granted_at" timestamptz null, "revoked_at" timestamptz null, "properties" jsonb not null, primary key ("id"));`);
    this.addSql(`create index "benefit_grants_customer_id_index" on "benefit_grants" ("customer_id");`);
    this.addSql(`create index "benefit_grants_benefit_id_index" on "benefit_grants" ("benefit_id");`);
    this.addSql(`create index "benefit_grants_subscription_id_index" on "benefit_grants" ("subscription_id");`);
    this.addSql(`create index "benefit_grants_order_id_index" on "benefit_grants" ("order_id");`);
    this.addSql(`create unique index "benefit_grants_scope_unique" on "benefit_grants" ("customer_id", "benefit_id", "subscription_id", "order_id") nulls not distinct;`);

    this.addSql(`create table "product_benefits" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "product_id" uuid not null, "benefit_id" uuid not null, "order" int not null, primary key ("id"));`);
    this.addSql(`create index "product_benefits_product_id_index" on "product_benefits" ("product_id");`);
    this.addSql(`create index "product_benefits_benefit_id_index" on "product_benefits" ("benefit_id");`);
    this.addSql(`alter table "product_benefits" add constraint "product_benefits_product_id_benefit_id_unique" unique ("product_id", "benefit_id");`);

    this.addSql(`create table "product_custom_fields" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "product_id" uuid not null, "custom_field_id" uuid not null, "order" int not null, "required" boolean not null, primary key ("id"));`);
    this.addSql(`create index "product_custom_fields_product_id_index" on "product_custom_fields" ("product_id");`);
    this.addSql(`create index "product_custom_fields_custom_field_id_index" on "product_custom_fields" ("custom_field_id");`);
    this.addSql(`alter table "product_custom_fields" add constraint "product_custom_fields_product_id_custom_field_id_unique" unique ("product_id", "custom_field_id");`);

    this.addSql(`create table "product_medias" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "product_id" uuid not null, "file_id" uuid not null, "order" int not null, primary key ("id"));`);
    this.addSql(`create index "product_medias_product_id_index" on "product_medias" ("product_id");`);
    this.addSql(`create index "product_medias_file_id_index" on "product_medias" ("file_id");`);
    this.addSql(`alter table "product_medias" add constraint "product_medias_product_id_file_id_unique" unique ("product_id", "file_id");`);

    this.addSql(`alter table "custom_fields" add constraint "custom_fields_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "custom_fields" add constraint "custom_fields_type_check" check ("type" in ('text', 'number', 'date', 'checkbox', 'select'));`);

    this.addSql(`alter table "benefits" add constraint "benefits_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "benefits" add constraint "benefits_type_check" check ("type" in ('custom', 'discord', 'downloadables', 'github_repository', 'license_keys', 'meter_credit'));`);

    this.addSql(`alter table "license_keys" add constraint "license_keys_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "license_keys" add constraint "license_keys_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on delete cascade;`);
    this.addSql(`alter table "license_keys" add constraint "license_keys_benefit_id_foreign" foreign key ("benefit_id") references "benefits" ("id") on delete cascade;`);
    this.addSql(`alter table "license_keys" add constraint "license_keys_status_check" check ("status" in ('granted', 'revoked', 'disabled'));`);

    this.addSql(`alter table "license_key_activations" add constraint "license_key_activations_license_key_id_foreign" foreign key ("license_key_id") references "license_keys" ("id") on delete cascade;`);

    this.addSql(`alter table "benefit_grants" add constraint "benefit_grants_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on delete cascade;`);
    this.addSql(`alter table "benefit_grants" add constraint "benefit_grants_benefit_id_foreign" foreign key ("benefit_id") references "benefits" ("id") on delete cascade;`);

    this.addSql(`alter table "product_benefits" add constraint "product_benefits_product_id_foreign" foreign key ("product_id") references "products" ("id") on delete cascade;`);
    this.addSql(`alter table "product_benefits" add constraint "product_benefits_benefit_id_foreign" foreign key ("benefit_id") references "benefits" ("id") on delete cascade;`);

    this.addSql(`alter table "product_custom_fields" add constraint "product_custom_fields_product_id_foreign" foreign key ("product_id") references "products" ("id") on delete cascade;`);
    this.addSql(`alter table "product_custom_fields" add constraint "product_custom_fields_custom_field_id_foreign" foreign key ("custom_field_id") references "custom_fields" ("id") on delete cascade;`);

    this.addSql(`alter table "product_medias" add constraint "product_medias_product_id_foreign" foreign key ("product_id") references "products" ("id") on delete cascade;`);
    this.addSql(`alter table "product_medias" add constraint "product_medias_file_id_foreign" foreign key ("file_id") references "files" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "product_custom_fields" drop constraint "product_custom_fields_custom_field_id_foreign";`);
    this.addSql(`alter table "license_keys" drop constraint "license_keys_benefit_id_foreign";`);
    this.addSql(`alter table "benefit_grants" drop constraint "benefit_grants_benefit_id_foreign";`);
    this.addSql(`alter table "product_benefits" drop constraint "product_benefits_benefit_id_foreign";`);
    this.addSql(`alter table "license_key_activations" drop constraint "license_key_activations_license_key_id_foreign";`);

    this.addSql(`drop table if exists "custom_fields" cascade;`);
    this.addSql(`drop table if exists "benefits" cascade;`);
    this.addSql(`drop table if exists "license_keys" cascade;`);
    this.addSql(`drop table if exists "license_key_activations" cascade;`);
    this.addSql(`drop table if exists "benefit_grants" cascade;`);
    this.addSql(`drop table if exists "product_benefits" cascade;`);
    this.addSql(`drop table if exists "product_custom_fields" cascade;`);
    this.addSql(`drop table if exists "product_medias" cascade;`);
  }

}
