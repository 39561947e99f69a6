import { Migration } from '@mikro-orm/migrations';

export class Migration20261122020818 extends Migration {

  override name = 'Migration20261122020818';

  override up(): void | Promise<void> {
    this.addSql(`create table "meters" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "name" varchar(255) not null, "filter" jsonb not null, "aggregation" jsonb not null, "metadata" jsonb not null, primary key ("id"));`);
    this.addSql(`create index "meters_organization_id_index" on "meters" ("organization_id");`);

    this.addSql(`create table "files" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "name" varchar(255) not null, "path" varchar(255) not null, "mime_type" varchar(255) not null, "size" bigint not null, "service" text not null, "version" varchar(255) null, "upload_id" varchar(255) null, "storage_version" varchar(255) null, "checksum_etag" varchar(255) null, "checksum_sha256base64" varchar(255) null, "checksum_sha256hex" varchar(255) null, "last_modified_at" timestamptz null, "is_uploaded" boolean not null default false, "is_enabled" boolean not null default true, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "files_organization_id_index" on "files" ("organization_id");`);

    this.addSql(`create table "customers" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "email" varchar(255) not null, "email_verified" boolean not null default false, "name" varchar(255) null, "external_id" varchar(255) null, "billing_address" jsonb null, "tax_id" jsonb null, "metadata" jsonb not null, "user_id" uuid null, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "customers_organization_id_index" on "customers" ("organization_id");`);
    this.addSql(`create unique index "customers_organization_email_live_unique" on "customers" ("organization_id", "email") where "deleted_at" is null;`);
    this.addSql(`create unique index "customers_organization_external_id_live_unique" on "customers" ("organization_id", "external_id") where "deleted_at" is null and "external_id" is not null;`);

    this.addSql(`create table "outbox_events" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "type" varchar(255) not null, "data" jsonb not null, "dispatched_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "outbox_events_organization_id_index" on "outbox_events" ("organization_id");`);
    this.addSql(`create index "outbox_events_dispatched_at_index" on "outbox_events" ("dispatched_at");`);

    this.addSql(`alter table "product_prices" add "meter_id" uuid null, add "unit_amount" numeric(17,12) null, add "cap_amount" int null;`);
    this.addSql(`alter table "product_prices" add constraint "product_prices_meter_id_foreign" foreign key ("meter_id") references "meters" ("id") on delete restrict;`);
    this.addSql(`create index "product_prices_meter_id_index" on "product_prices" ("meter_id");`);

    this.addSql(`alter table "meters" add constraint "meters_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);

    this.addSql(`alter table "files" add constraint "files_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "files" add constraint "files_service_check" check ("service" in ('downloadable', 'product_media', 'organization_avatar'));`);

    this.addSql(`alter table "customers" add constraint "customers_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "product_prices" drop constraint "product_prices_meter_id_foreign";`);

    this.addSql(`drop table if exists "meters" cascade;`);
    this.addSql(`drop table if exists "files" cascade;`);
    this.addSql(`drop table if exists "customers" cascade;`);
    this.addSql(`drop table if exists "outbox_events" cascade;`);

    this.addSql(`drop index "product_prices_meter_id_index";`);
    this.addSql(`alter table "product_prices" drop column "meter_id", drop column "unit_amount", drop column "cap_amount";`);
  }

}
