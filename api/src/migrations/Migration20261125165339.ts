import { Migration } from '@mikro-orm/migrations';

export class Migration20261125165339 extends Migration {

  override name = 'Migration20261125165339';

  override up(): void | Promise<void> {
    this.addSql(`create table "two_factor_backup_codes" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "user_id" uuid not null, "code_hash" varchar(255) not null, primary key ("id"));`);
    this.addSql(`create index "two_factor_backup_codes_user_id_index" on "two_factor_backup_codes" ("user_id");`);
    this.addSql(`alter table "two_factor_backup_codes" add constraint "two_factor_backup_codes_user_id_code_hash_unique" unique ("user_id", "code_hash");`);

    this.addSql(`create table "two_factors" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "user_id" uuid not null, "secret_sealed" text not null, "last_totp_step" bigint null, primary key ("id"));`);
    this.addSql(`alter table "two_factors" add constraint "two_factors_user_id_unique" unique ("user_id");`);

    this.addSql(`alter table "users" add "two_factor_enabled" boolean not null default false, add "role" varchar(255) not null default 'user', add "banned" boolean not null default false, add "ban_reason" text null, add "ban_expires" timestamptz null;`);

    this.addSql(`alter table "sessions" add "impersonated_by" uuid null;`);

    this.addSql(`alter table "two_factor_backup_codes" add constraint "two_factor_backup_codes_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);

    this.addSql(`alter table "two_factors" add constraint "two_factors_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "two_factor_backup_codes" cascade;`);
    this.addSql(`drop table if exists "two_factors" cascade;`);

    this.addSql(`alter table "sessions" drop column "impersonated_by";`);

    this.addSql(`alter table "users" drop column "two_factor_enabled", drop column "role", drop column "banned", drop column "ban_reason", drop column "ban_expires";`);
  }

}
