import { Migration } from '@mikro-orm/migrations';

export class Migration20261125134121 extends Migration {

  override name = 'Migration20261125134121';

  override up(): void | Promise<void> {
    this.addSql(`create table "customer_session_codes" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "customer_id" uuid not null, "code_hash" varchar(255) not null, "expires_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "customer_session_codes_customer_id_index" on "customer_session_codes" ("customer_id");`);
    this.addSql(`alter table "customer_session_codes" add constraint "customer_session_codes_code_hash_unique" unique ("code_hash");`);
    this.addSql(`create index "customer_session_codes_expires_at_index" on "customer_session_codes" ("expires_at");`);

    this.addSql(`alter table "customer_session_codes" add constraint "customer_session_codes_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "customer_session_codes" cascade;`);

  }

}
