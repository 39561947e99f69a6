import { Migration } from '@mikro-orm/migrations';

export class Migration20261125194223 extends Migration {

  override name = 'Migration20261125194223';

  // One trial per customer and product, enforced by the unique keys (api/src/modules/trials/).
  override up(): void | Promise<void> {
    this.addSql(`create table "trial_redemptions" ("id" uuid not null, "organization_id" uuid not null, "product_id" uuid not null, "customer_id" uuid not null, "customer_email" varchar(255) not null, "checkout_id" uuid not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "trial_redemptions_organization_id_index" on "trial_redemptions" ("organization_id");`);
    this.addSql(`create index "trial_redemptions_customer_id_index" on "trial_redemptions" ("customer_id");`);
    this.addSql(`alter table "trial_redemptions" add constraint "trial_redemptions_product_customer_unique" unique ("product_id", "customer_id");`);
    this.addSql(`alter table "trial_redemptions" add constraint "trial_redemptions_product_email_unique" unique ("product_id", "customer_email");`);

    this.addSql(`alter table "trial_redemptions" add constraint "trial_redemptions_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "trial_redemptions" add constraint "trial_redemptions_product_id_foreign" foreign key ("product_id") references "products" ("id") on delete cascade;`);
    this.addSql(`alter table "trial_redemptions" add constraint "trial_redemptions_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "trial_redemptions" cascade;`);
  }

}
