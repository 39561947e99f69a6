import { Migration } from '@mikro-orm/migrations';

export class Migration20261122015224 extends Migration {

  override name = 'Migration20261122015224';

  override up(): void | Promise<void> {
    this.addSql(`create table "notifications" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid null, "kind" varchar(255) not null, "dedupe_key" varchar(255) not null, "recipient" varchar(255) not null, "subject" varchar(255) not null, "message_id" varchar(255) null, "sent_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "notifications_organization_id_index" on "notifications" ("organization_id");`);
    this.addSql(`alter table "notifications" add constraint "notifications_dedupe_key_unique" unique ("dedupe_key");`);

    this.addSql(`create table "organizations" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "name" varchar(255) not null, "slug" varchar(255) not null, "avatar_url" text null, "email" varchar(255) null, "website" text null, "socials" jsonb not null, "details" jsonb null, "feature_settings" jsonb not null, "subscription_settings" jsonb not null, "metadata" jsonb not null, primary key ("id"));`);
    this.addSql(`alter table "organizations" add constraint "organizations_slug_unique" unique ("slug");`);

    this.addSql(`create table "organization_access_tokens" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "comment" varchar(255) not null default '', "token_hash" varchar(255) not null, "scopes" text[] not null, "expires_at" timestamptz null, "last_used_at" timestamptz null, "revoked_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "organization_access_tokens_organization_id_index" on "organization_access_tokens" ("organization_id");`);
    this.addSql(`alter table "organization_access_tokens" add constraint "organization_access_tokens_token_hash_unique" unique ("token_hash");`);

    this.addSql(`create table "products" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "name" varchar(255) not null, "description" text null, "recurring_interval" text null, "is_archived" boolean not null default false, "metadata" jsonb not null, primary key ("id"));`);
    this.addSql(`create index "products_organization_id_index" on "products" ("organization_id");`);
    this.addSql(`alter table "products" add constraint "products_recurring_interval_check" check ("recurring_interval" in ('month', 'year'));`);

    this.addSql(`create table "product_prices" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "product_id" uuid not null, "amount_type" text not null, "price_currency" varchar(3) not null default 'usd', "price_amount" int null, "minimum_amount" int null, "maximum_amount" int null, "preset_amount" int null, "is_archived" boolean not null default false, primary key ("id"));`);
    this.addSql(`create index "product_prices_product_id_index" on "product_prices" ("product_id");`);
    this.addSql(`alter table "product_prices" add constraint "product_prices_amount_type_check" check ("amount_type" in ('fixed', 'custom', 'free', 'metered_unit'));`);

    this.addSql(`create table "users" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "email" varchar(255) not null, "email_verified" boolean not null default false, "name" varchar(255) not null default '', "image" varchar(255) null, "username" varchar(255) null, "display_username" varchar(255) null, primary key ("id"));`);
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);
    this.addSql(`alter table "users" add constraint "users_username_unique" unique ("username");`);

    this.addSql(`create table "sessions" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "user_id" uuid not null, "token_hash" varchar(255) not null, "expires_at" timestamptz not null, "ip_address" varchar(255) null, "user_agent" text null, "active_organization_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "sessions_user_id_index" on "sessions" ("user_id");`);
    this.addSql(`alter table "sessions" add constraint "sessions_token_hash_unique" unique ("token_hash");`);

    this.addSql(`create table "members" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "user_id" uuid not null, "role" varchar(255) not null default 'member', primary key ("id"));`);
    this.addSql(`create index "members_organization_id_index" on "members" ("organization_id");`);
    this.addSql(`create index "members_user_id_index" on "members" ("user_id");`);
    this.addSql(`alter table "members" add constraint "members_organization_id_user_id_unique" unique ("organization_id", "user_id");`);

    this.addSql(`create table "accounts" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "user_id" uuid not null, "provider_id" varchar(255) not null, "account_id" varchar(255) not null, "password" varchar(255) null, "access_token" text null, "refresh_token" text null, "id_token" text null, "access_token_expires_at" timestamptz null, "refresh_token_expires_at" timestamptz null, "scope" varchar(255) null, primary key ("id"));`);
    this.addSql(`create index "accounts_user_id_index" on "accounts" ("user_id");`);
    this.addSql(`alter table "accounts" add constraint "accounts_provider_id_account_id_unique" unique ("provider_id", "account_id");`);

    this.addSql(`alter table "organization_access_tokens" add constraint "organization_access_tokens_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);

    this.addSql(`alter table "products" add constraint "products_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);

    this.addSql(`alter table "product_prices" add constraint "product_prices_product_id_foreign" foreign key ("product_id") references "products" ("id") on delete cascade;`);

    this.addSql(`alter table "sessions" add constraint "sessions_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);

    this.addSql(`alter table "members" add constraint "members_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "members" add constraint "members_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);

    this.addSql(`alter table "accounts" add constraint "accounts_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
  }

}
