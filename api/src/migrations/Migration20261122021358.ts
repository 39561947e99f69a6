import { Migration } from '@mikro-orm/migrations';

export class Migration20261122021358 extends Migration {

  override name = 'Migration20261122021358';

  override up(): void | Promise<void> {
    this.addSql(`create table "events" ("id" uuid not null, "created_at" timestamptz not null, "timestamp" timestamptz not null, "name" varchar(255) not null, "source" text not null, "organization_id" uuid not null, "customer_id" uuid null, "external_customer_id" varchar(255) null, "metadata" jsonb not null, primary key ("id"));`);
    this.addSql(`create index "events_organization_name_timestamp_index" on "events" ("organization_id", "name", "timestamp");`);
    this.addSql(`create index "events_organization_customer_timestamp_index" on "events" ("organization_id", "customer_id", "timestamp");`);
    this.addSql(`create index "events_organization_external_customer_timestamp_index" on "events" ("organization_id", "external_customer_id", "timestamp");`);
    this.addSql(`create index "events_organization_timestamp_index" on "events" ("organization_id", "timestamp");`);

    this.addSql(`alter table "events" add constraint "events_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "events" add constraint "events_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on delete set null;`);
    this.addSql(`alter table "events" add constraint "events_source_check" check ("source" in ('system', 'user'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "events" cascade;`);
  }

}
