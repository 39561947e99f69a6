import { Migration } from '@mikro-orm/migrations';

export class Migration20261125103000 extends Migration {

  override name = 'Migration20261125103000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "checkouts" add column "charge_attempt" int not null default 0;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "checkouts" drop column "charge_attempt";`);
  }

}
