import { Migration } from '@mikro-orm/migrations';

export class Migration20261125141028 extends Migration {

  override name = 'Migration20261125141028';

  override up(): void | Promise<void> {
    this.addSql(`alter table "workflow_starts" add "metadata" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "workflow_starts" drop column "metadata";`);
  }

}
