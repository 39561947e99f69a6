import { Migration } from '@mikro-orm/migrations';

export class Migration20261122021722 extends Migration {

  override name = 'Migration20261122021722';

  override up(): void | Promise<void> {
    // Wake the outbox dispatcher when outbox rows commit (NOTIFY is delivered on commit only).
    this.addSql(`create or replace function "notify_outbox_events"() returns trigger language plpgsql as $$ begin perform pg_notify('outbox_events', ''); return null; end $$;`);
    this.addSql(`create trigger "outbox_events_notify" after insert on "outbox_events" for each statement execute function "notify_outbox_events"();`);

    this.addSql(`create table "webhook_endpoints" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "url" text not null, "format" text not null, "secret_sealed" text not null, "events" text[] not null, "enabled" boolean not null default true, "disabled_at" timestamptz null, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "webhook_endpoints_organization_id_index" on "webhook_endpoints" ("organization_id");`);

    this.addSql(`create table "webhook_events" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "endpoint_id" uuid not null, "outbox_event_id" uuid not null, "type" varchar(255) not null, "payload" text not null, "succeeded" boolean null, "last_http_code" int null, "attempts" int not null default 0, primary key ("id"));`);
    this.addSql(`create index "webhook_events_endpoint_id_index" on "webhook_events" ("endpoint_id");`);
    this.addSql(`alter table "webhook_events" add constraint "webhook_events_outbox_event_id_endpoint_id_unique" unique ("outbox_event_id", "endpoint_id");`);

    this.addSql(`create table "webhook_deliveries" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "webhook_event_id" uuid not null, "attempt" int not null, "succeeded" boolean not null, "http_code" int null, "response" text null, "duration_ms" int not null, primary key ("id"));`);
    this.addSql(`create index "webhook_deliveries_webhook_event_id_index" on "webhook_deliveries" ("webhook_event_id");`);

    this.addSql(`alter table "webhook_endpoints" add constraint "webhook_endpoints_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_endpoints" add constraint "webhook_endpoints_format_check" check ("format" in ('raw', 'discord', 'slack'));`);

    this.addSql(`alter table "webhook_events" add constraint "webhook_events_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_events" add constraint "webhook_events_outbox_event_id_foreign" foreign key ("outbox_event_id") references "outbox_events" ("id") on delete cascade;`);

    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_webhook_event_id_foreign" foreign key ("webhook_event_id") references "webhook_events" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "outbox_events_notify" on "outbox_events";`);
    this.addSql(`drop function if exists "notify_outbox_events"();`);
    this.addSql(`alter table "webhook_events" drop constraint "webhook_events_endpoint_id_foreign";`);
    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_webhook_event_id_foreign";`);

    this.addSql(`drop table if exists "webhook_endpoints" cascade;`);
    this.addSql(`drop table if exists "webhook_events" cascade;`);
    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);

  }

}
