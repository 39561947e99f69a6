import { Migration } from '@mikro-orm/migrations';

export class Migration20261122044049 extends Migration {

  override name = 'Migration20261122044049';

  override up(): void | Promise<void> {
    this.addSql(`alter table "subscriptions" add "pending_proration_amount" int not null default 0;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "subscriptions" drop column "pending_proration_amount";`);
  }

}
