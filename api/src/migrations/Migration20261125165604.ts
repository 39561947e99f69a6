import { Migration } from '@mikro-orm/migrations';

export class Migration20261125165604 extends Migration {

  override name = 'Migration20261125165604';

  override up(): void | Promise<void> {
    this.addSql(`create table "passkeys" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "user_id" uuid not null, "name" varchar(255) null, "public_key" text not null, "credential_id" varchar(1024) not null, "counter" bigint not null default '0', "device_type" varchar(255) not null, "backed_up" boolean not null, "transports" varchar(255) null, "aaguid" varchar(255) null, primary key ("id"));`);
    this.addSql(`create index "passkeys_user_id_index" on "passkeys" ("user_id");`);
    this.addSql(`alter table "passkeys" add constraint "passkeys_credential_id_unique" unique ("credential_id");`);

    this.addSql(`alter table "passkeys" add constraint "passkeys_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "passkeys" cascade;`);
  }

}
