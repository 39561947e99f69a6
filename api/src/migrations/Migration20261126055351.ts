import { Migration } from '@mikro-orm/migrations';

export class Migration20261126055351 extends Migration {

  override name = 'Migration20261126055351';

  override up(): void | Promise<void> {
    this.addSql(`create index "customers_organization_live_created_at_id_index" on "customers" ("organization_id", "created_at" desc, "id") where "deleted_at" is null;`);
    this.addSql(`create index "subscriptions_organization_created_at_id_index" on "subscriptions" ("organization_id", "created_at" desc, "id");`);
    this.addSql(`create index "orders_organization_created_at_id_index" on "orders" ("organization_id", "created_at" desc, "id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "customers_organization_live_created_at_id_index";`);
    this.addSql(`drop index "subscriptions_organization_created_at_id_index";`);
    this.addSql(`drop index "orders_organization_created_at_id_index";`);
  }

}
