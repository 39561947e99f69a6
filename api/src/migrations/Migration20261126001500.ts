import { Migration } from '@mikro-orm/migrations';

const ORDER_UPDATE_OF = `"status", "created_at", "net_amount", "organization_id", "product_id", "subscription_id"`;
const ORDER_UPDATE_WHEN = `old."status" is distinct from new."status" or old."created_at" is distinct from new."created_at"
        or old."net_amount" is distinct from new."net_amount" or old."organization_id" is distinct from new."organization_id"
        or old."product_id" is distinct from new."product_id" or old."subscription_id" is distinct from new."subscription_id"`;
const SUBSCRIPTION_UPDATE_OF = `"started_at", "ended_at", "amount", "recurring_interval", "organization_id", "product_id"`;
const SUBSCRIPTION_UPDATE_WHEN = `old."started_at" is distinct from new."started_at" or old."ended_at" is distinct from new."ended_at"
        or old."amount" is distinct from new."amount" or old."recurring_interval" is distinct from new."recurring_interval"
        or old."organization_id" is distinct from new."organization_id" or old."product_id" is distinct from new."product_id"`;

/** The four metrics triggers, as plain row triggers (`deferred` false) or as constraint triggers fired at commit. */
function triggers(deferred: boolean): string[] {
  const create = deferred ? 'create constraint trigger' : 'create trigger';
  const timing = deferred ? ' deferrable initially deferred' : '';
  return [
    `${create} "orders_metrics_insert_delete" after insert or delete on "orders"${timing}
      for each row execute function "metrics_orders_changed"();`,
    `${create} "orders_metrics_update" after update of ${ORDER_UPDATE_OF} on "orders"${timing}
      for each row when (${ORDER_UPDATE_WHEN})
      execute function "metrics_orders_changed"();`,
    `${create} "subscriptions_metrics_insert_delete" after insert or delete on "subscriptions"${timing}
      for each row execute function "metrics_subscriptions_changed"();`,
    `${create} "subscriptions_metrics_update" after update of ${SUBSCRIPTION_UPDATE_OF} on "subscriptions"${timing}
      for each row when (${SUBSCRIPTION_UPDATE_WHEN})
      execute function "metrics_subscriptions_changed"();`,
  ];
}

const DROP = [
  `drop trigger "orders_metrics_insert_delete" on "orders";`,
  `drop trigger "orders_metrics_update" on "orders";`,
  `drop trigger "subscriptions_metrics_insert_delete" on "subscriptions";`,
  `drop trigger "subscriptions_metrics_update" on "subscriptions";`,
];

export class Migration20261126001500 extends Migration {

  override name = 'Migration20261126001500';

  // The metrics aggregates' triggers fire at commit (deferred constraint triggers) instead of at
  // each row change: the aggregate rows they upsert are shared by every order of a product in the
  // same quarter hour, so a row trigger held that row lock from the order's insert to the end of the
  // fulfilment transaction and concurrent purchases of one product waited for each other. At commit
  // the lock is held for the commit alone. The functions read the orders' current state
  // (metrics_order_refresh) or apply OLD/NEW in event order, so firing later gives the same totals.
  override up(): void | Promise<void> {
    for (const sql of [...DROP, ...triggers(true)]) this.addSql(sql);
  }

  override down(): void | Promise<void> {
    for (const sql of [...DROP, ...triggers(false)]) this.addSql(sql);
  }

}
