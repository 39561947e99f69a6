import { Migration } from '@mikro-orm/migrations';

/**
 * The seller's lists read a page in index order in their default sorting (newest first, then id):
 * subscriptions by `started_at` (the index on `created_at` served no sorting the list offers), products
 * and live benefits by `created_at`. Without them a page of 10 scanned and sorted every subscription of
 * the organization (1,159 rows read per page of 10 at 1,200 subscriptions, docs/performance.md).
 */
export class Migration20261127061500 extends Migration {
  override name = 'Migration20261127061500';

  override up(): void | Promise<void> {
    this.addSql(`create index "subscriptions_organization_started_at_id_index" on "subscriptions" ("organization_id", "started_at" desc, "id");`);
    this.addSql(`drop index "subscriptions_organization_created_at_id_index";`);
    this.addSql(`create index "products_organization_created_at_id_index" on "products" ("organization_id", "created_at" desc, "id");`);
    this.addSql(`create index "benefits_organization_live_created_at_id_index" on "benefits" ("organization_id", "created_at" desc, "id") where "deleted_at" is null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "benefits_organization_live_created_at_id_index";`);
    this.addSql(`drop index "products_organization_created_at_id_index";`);
    this.addSql(`create index "subscriptions_organization_created_at_id_index" on "subscriptions" ("organization_id", "created_at" desc, "id");`);
    this.addSql(`drop index "subscriptions_organization_started_at_id_index";`);
  }
}
