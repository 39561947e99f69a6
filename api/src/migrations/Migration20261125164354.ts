import { Migration } from '@mikro-orm/migrations';

export class Migration20261125164354 extends Migration {

  override name = 'Migration20261125164354';

  override up(): void | Promise<void> {
    this.addSql(`create table "oauth2_signing_keys" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "kid" varchar(255) not null, "private_key_sealed" text not null, "public_jwk" jsonb not null, "retired_at" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "oauth2_signing_keys" add constraint "oauth2_signing_keys_kid_unique" unique ("kid");`);
    this.addSql(`create table "oauth2_clients" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "user_id" uuid not null, "client_id" varchar(255) not null, "client_secret_hash" varchar(255) null, "client_id_issued_at" int not null, "client_secret_expires_at" int not null default 0, "redirect_uris" text[] not null, "token_endpoint_auth_method" text not null, "grant_types" text[] not null, "response_types" text[] not null, "scope" text not null, "client_name" varchar(255) not null, "client_uri" text null, "logo_uri" text null, "tos_uri" text null, "policy_uri" text null, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "oauth2_clients_user_id_index" on "oauth2_clients" ("user_id");`);
    this.addSql(`alter table "oauth2_clients" add constraint "oauth2_clients_client_id_unique" unique ("client_id");`);
    this.addSql(`create table "oauth2_grants" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "client_id" uuid not null, "user_id" uuid not null, "sub_type" text not null, "organization_id" uuid null, "scopes" text[] not null, "nonce" text null, "auth_time" timestamptz not null, "revoked_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "oauth2_grants_client_id_index" on "oauth2_grants" ("client_id");`);
    this.addSql(`create index "oauth2_grants_user_id_index" on "oauth2_grants" ("user_id");`);
    this.addSql(`create table "oauth2_tokens" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "grant_id" uuid not null, "access_token_hash" varchar(255) not null, "refresh_token_hash" varchar(255) null, "scopes" text[] not null, "access_expires_at" timestamptz not null, "refresh_expires_at" timestamptz null, "refresh_used_at" timestamptz null, "revoked_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "oauth2_tokens_grant_id_index" on "oauth2_tokens" ("grant_id");`);
    this.addSql(`alter table "oauth2_tokens" add constraint "oauth2_tokens_access_token_hash_unique" unique ("access_token_hash");`);
    this.addSql(`alter table "oauth2_tokens" add constraint "oauth2_tokens_refresh_token_hash_unique" unique ("refresh_token_hash");`);
    this.addSql(`create table "oauth2_authorization_codes" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "code_hash" varchar(255) not null, "client_id" uuid not null, "user_id" uuid not null, "sub_type" text not null, "organization_id" uuid null, "scopes" text[] not null, "redirect_uri" text not null, "code_challenge" varchar(255) null, "nonce" text null, "expires_at" timestamptz not null, "used_at" timestamptz null, "grant_id" uuid null, primary key ("id"));`);
    this.addSql(`alter table "oauth2_authorization_codes" add constraint "oauth2_authorization_codes_code_hash_unique" unique ("code_hash");`);
    this.addSql(`create index "oauth2_authorization_codes_client_id_index" on "oauth2_authorization_codes" ("client_id");`);
    this.addSql(`alter table "oauth2_clients" add constraint "oauth2_clients_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "oauth2_clients" add constraint "oauth2_clients_token_endpoint_auth_method_check" check ("token_endpoint_auth_method" in ('client_secret_basic', 'client_secret_post', 'none'));`);
    this.addSql(`alter table "oauth2_grants" add constraint "oauth2_grants_client_id_foreign" foreign key ("client_id") references "oauth2_clients" ("id") on delete cascade;`);
    this.addSql(`alter table "oauth2_grants" add constraint "oauth2_grants_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "oauth2_grants" add constraint "oauth2_grants_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "oauth2_grants" add constraint "oauth2_grants_sub_type_check" check ("sub_type" in ('user', 'organization'));`);
    this.addSql(`alter table "oauth2_tokens" add constraint "oauth2_tokens_grant_id_foreign" foreign key ("grant_id") references "oauth2_grants" ("id") on delete cascade;`);
    this.addSql(`alter table "oauth2_authorization_codes" add constraint "oauth2_authorization_codes_client_id_foreign" foreign key ("client_id") references "oauth2_clients" ("id") on delete cascade;`);
    this.addSql(`alter table "oauth2_authorization_codes" add constraint "oauth2_authorization_codes_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "oauth2_authorization_codes" add constraint "oauth2_authorization_codes_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "oauth2_authorization_codes" add constraint "oauth2_authorization_codes_grant_id_foreign" foreign key ("grant_id") references "oauth2_grants" ("id") on delete cascade;`);
    this.addSql(`alter table "oauth2_authorization_codes" add constraint "oauth2_authorization_codes_sub_type_check" check ("sub_type" in ('user', 'organization'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "oauth2_grants" drop constraint "oauth2_grants_client_id_foreign";`);
    this.addSql(`alter table "oauth2_authorization_codes" drop constraint "oauth2_authorization_codes_client_id_foreign";`);
    this.addSql(`alter table "oauth2_tokens" drop constraint "oauth2_tokens_grant_id_foreign";`);
    this.addSql(`alter table "oauth2_authorization_codes" drop constraint "oauth2_authorization_codes_grant_id_foreign";`);
    this.addSql(`drop table if exists "oauth2_signing_keys" cascade;`);
    this.addSql(`drop table if exists "oauth2_clients" cascade;`);
    this.addSql(`drop table if exists "oauth2_grants" cascade;`);
    this.addSql(`drop table if exists "oauth2_tokens" cascade;`);
    this.addSql(`drop table if exists "oauth2_authorization_codes" cascade;`);
  }

}
