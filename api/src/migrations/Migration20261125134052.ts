import { Migration } from '@mikro-orm/migrations';

export class Migration20261125134052 extends Migration {

  override name = 'Migration20261125134052';

  override up(): void | Promise<void> {
    this.addSql(`alter table "customer_sessions" add "checkout_id" uuid null;`);
    this.addSql(`alter table "customer_sessions" add constraint "customer_sessions_checkout_id_foreign" foreign key ("checkout_id") references "checkouts" ("id") on delete cascade;`);
    this.addSql(`create index "customer_sessions_checkout_id_index" on "customer_sessions" ("checkout_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "customer_sessions" drop constraint "customer_sessions_checkout_id_foreign";`);

    this.addSql(`drop index "customer_sessions_checkout_id_index";`);
    this.addSql(`alter table "customer_sessions" drop column "checkout_id";`);
  }

}
