import { Migration } from '@mikro-orm/migrations';

export class Migration20261125164514 extends Migration {

  override name = 'Migration20261125164514';

  override up(): void | Promise<void> {
    this.addSql(`alter table "products" add "trial_interval" text null, add "trial_interval_count" int null;`);
    this.addSql(`alter table "products" add constraint "products_trial_interval_check" check ("trial_interval" in ('day', 'week', 'month', 'year'));`);

    this.addSql(`alter table "checkout_links" add "trial_interval" text null, add "trial_interval_count" int null;`);
    this.addSql(`alter table "checkout_links" add constraint "checkout_links_trial_interval_check" check ("trial_interval" in ('day', 'week', 'month', 'year'));`);

    this.addSql(`alter table "checkouts" add "trial_interval" text null, add "trial_interval_count" int null, add "active_trial_interval" text null, add "active_trial_interval_count" int null;`);
    this.addSql(`alter table "checkouts" add constraint "checkouts_trial_interval_check" check ("trial_interval" in ('day', 'week', 'month', 'year'));`);
    this.addSql(`alter table "checkouts" add constraint "checkouts_active_trial_interval_check" check ("active_trial_interval" in ('day', 'week', 'month', 'year'));`);

    this.addSql(`alter table "subscriptions" add "trial_start" timestamptz null, add "trial_end" timestamptz null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "checkout_links" drop constraint "checkout_links_trial_interval_check";`);
    this.addSql(`alter table "checkout_links" drop column "trial_interval", drop column "trial_interval_count";`);

    this.addSql(`alter table "checkouts" drop constraint "checkouts_trial_interval_check";`);
    this.addSql(`alter table "checkouts" drop constraint "checkouts_active_trial_interval_check";`);
    this.addSql(`alter table "checkouts" drop column "trial_interval", drop column "trial_interval_count", drop column "active_trial_interval", drop column "active_trial_interval_count";`);

    this.addSql(`alter table "products" drop constraint "products_trial_interval_check";`);
    this.addSql(`alter table "products" drop column "trial_interval", drop column "trial_interval_count";`);

    this.addSql(`alter table "subscriptions" drop column "trial_start", drop column "trial_end";`);
  }

}
