import { Migration } from '@mikro-orm/migrations';

export class Migration20261125171500 extends Migration {

  override name = 'Migration20261125171500';

  // Accounts a customer connected in the portal (OAuth) for GitHub and Discord benefits.
  override up(): void | Promise<void> {
    this.addSql(`alter table "customers" add "oauth_accounts" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "customers" drop column "oauth_accounts";`);
  }

}
