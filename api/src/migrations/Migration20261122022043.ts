import { Migration } from '@mikro-orm/migrations';

/** Auth service: verification values, rate limits, session refresh columns; organization teams, invitations and the seller-profile columns. */
export class Migration20261122022043 extends Migration {

  override name = 'Migration20261122022043';

  override up(): void | Promise<void> {
    this.addSql(`create table "rate_limits" ("key" varchar(255) not null, "count" int not null, "window_start" timestamptz not null, primary key ("key"));`);

    this.addSql(`create table "teams" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "name" varchar(255) not null, primary key ("id"));`);
    this.addSql(`create index "teams_organization_id_index" on "teams" ("organization_id");`);

    this.addSql(`create table "invitations" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "email" varchar(255) not null, "role" varchar(255) not null, "status" text not null default 'pending', "team_id" uuid null, "inviter_id" uuid not null, "expires_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "invitations_organization_id_index" on "invitations" ("organization_id");`);
    this.addSql(`create index "invitations_email_index" on "invitations" ("email");`);

    this.addSql(`create table "verifications" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "identifier" varchar(255) not null, "value" text not null, "expires_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "verifications" add constraint "verifications_identifier_unique" unique ("identifier");`);
    this.addSql(`create index "verifications_expires_at_index" on "verifications" ("expires_at");`);

    this.addSql(`alter table "organizations" add "details_submitted_at" timestamptz null, add "profile_settings" jsonb null, add "bio" text null, add "company" varchar(255) null, add "blog" varchar(255) null, add "location" varchar(255) null, add "twitter_username" varchar(255) null, add "billing_email" varchar(255) null, add "pledge_minimum_amount" int not null default 2000, add "pledge_badge_show_amount" boolean not null default false, add "default_upfront_split_to_contributors" int null, add "default_badge_custom_content" text null, add "total_monthly_spending_limit" int null, add "per_user_monthly_spending_limit" int null;`);

    this.addSql(`alter table "sessions" add "updated_at" timestamptz null, add "remember_me" boolean not null default true;`);

    this.addSql(`alter table "members" add "team_id" uuid null;`);
    this.addSql(`alter table "members" add constraint "members_team_id_foreign" foreign key ("team_id") references "teams" ("id") on delete set null;`);
    this.addSql(`create index "members_team_id_index" on "members" ("team_id");`);

    this.addSql(`alter table "teams" add constraint "teams_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);

    this.addSql(`alter table "invitations" add constraint "invitations_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "invitations" add constraint "invitations_team_id_foreign" foreign key ("team_id") references "teams" ("id") on delete set null;`);
    this.addSql(`alter table "invitations" add constraint "invitations_inviter_id_foreign" foreign key ("inviter_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "invitations" add constraint "invitations_status_check" check ("status" in ('pending', 'accepted', 'rejected', 'canceled'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "members" drop constraint "members_team_id_foreign";`);
    this.addSql(`alter table "invitations" drop constraint "invitations_team_id_foreign";`);

    this.addSql(`drop table if exists "rate_limits" cascade;`);
    this.addSql(`drop table if exists "teams" cascade;`);
    this.addSql(`drop table if exists "invitations" cascade;`);
    this.addSql(`drop table if exists "verifications" cascade;`);

    this.addSql(`drop index "members_team_id_index";`);
    this.addSql(`alter table "members" drop column "team_id";`);

    this.addSql(`alter table "organizations" drop column "details_submitted_at", drop column "profile_settings", drop column "bio", drop column "company", drop column "blog", drop column "location", drop column "twitter_username", drop column "billing_email", drop column "pledge_minimum_amount", drop column "pledge_badge_show_amount", drop column "default_upfront_split_to_contributors", drop column "default_badge_custom_content", drop column "total_monthly_spending_limit", drop column "per_user_monthly_spending_limit";`);

    this.addSql(`alter table "sessions" drop column "updated_at", drop column "remember_me";`);
  }

}
