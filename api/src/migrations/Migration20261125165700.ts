import { Migration } from '@mikro-orm/migrations';

export class Migration20261125165700 extends Migration {

  override name = 'Migration20261125165700';

  override up(): void | Promise<void> {
    this.addSql(`create table "idempotency_keys" ("scope" varchar(64) not null, "key" varchar(255) not null, "fingerprint" varchar(64) not null, "status" int null, "body" jsonb null, "created_at" timestamptz not null, primary key ("scope", "key"));`);
    this.addSql(`create index "idempotency_keys_created_at_index" on "idempotency_keys" ("created_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "idempotency_keys" cascade;`);
  }
}
