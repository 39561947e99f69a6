import { Migration } from '@mikro-orm/migrations';

export class Migration20261124175650 extends Migration {

  override name = 'Migration20261124175650';

  override up(): void | Promise<void> {
    this.addSql(`create index "checkouts_open_expires_at_index" on "checkouts" ("expires_at") where "status" = 'open';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "checkouts_open_expires_at_index";`);
  }

}
