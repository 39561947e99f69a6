import { Migration } from '@mikro-orm/migrations';

/**
 * The metrics functions, with (`customer` true) or without the per-customer aggregates. Per customer,
 * `metrics_customer_order_buckets` has the columns of `metrics_order_buckets` plus `customer_id`,
 * and its two renewal gaps are taken to the subscription's previous paid order of the same customer
 * (`renew_gap_org`: any product; `renew_gap_product`: the same product), so "the first order of the
 * subscription in the period" holds for that customer's orders alone, whatever customer the
 * subscription itself has. `metrics_customer_subscription_buckets` sums starts and ends per
 * subscription's customer.
 */
function functions(customer: boolean): string[] {
  const factsSelect = (renew: (extra: string) => string) => `o."id", o."organization_id", o."product_id", "metrics_bucket"(o."created_at"),
                 case when o."subscription_id" is null then 0 when s."started_at" is null then 2 else 1 end,
                 "metrics_bucket"(s."started_at"),
                 ${renew('')},
                 ${renew(`, o."product_id"`)},
                 o."net_amount"${customer ? `, o."customer_id",
                 ${renew(`, o."customer_id"`)},
                 ${renew(`, o."customer_id", o."product_id"`)}` : ''}`;
  // The previous paid order of the subscription within the partition given (organization, plus `extra`).
  const previousOf = (extra: string) => {
    const same = extra
      .split(',')
      .filter((c) => c.trim())
      .map((c) => ` and p.${c.trim().replace('o.', '')} = ${c.trim()}`)
      .join('');
    return `greatest("metrics_bucket"(s."started_at"), (select "metrics_bucket"(max(p."created_at")) from "orders" p
                 where p."subscription_id" = o."subscription_id" and p."organization_id" = o."organization_id"${same}
                   and p."status" <> 'pending' and (p."created_at", p."id") < (o."created_at", o."id")))`;
  };
  const lagOf = (extra: string) => `greatest("metrics_bucket"(s."started_at"), "metrics_bucket"(lag(o."created_at") over (
                   partition by o."subscription_id", o."organization_id"${extra} order by o."created_at", o."id")))`;
  const gaps = (renewOrg: string, renewProduct: string, g: string) => `
            case when f."kind" = 1 then greatest(-${g}, least(${g}, f."bucket" - f."start_bucket")) else 0 end,
            case when f."kind" = 1 then greatest(-${g}, least(${g}, f."bucket" - f."${renewOrg}")) else 0 end,
            case when f."kind" = 1 then greatest(-${g}, least(${g}, f."bucket" - f."${renewProduct}")) else 0 end`;
  const orderKey = `"organization_id", "class", "bucket", "product_id", "kind", "start_gap", "renew_gap_org", "renew_gap_product"`;
  const customerKey = `"organization_id", "customer_id", "class", "bucket", "product_id", "kind", "start_gap", "renew_gap_org", "renew_gap_product"`;
  const subscriptionRows = (by: string) => `
          select "organization_id",${by} "bucket", "product_id", sum("sn"), sum("sm"), sum("en"), sum("em")
          from (
            select "organization_id",${by} "metrics_bucket"("started_at") as "bucket", "product_id", 1 as "sn",
                   "metrics_subscription_mrr"("amount", "recurring_interval") as "sm", 0 as "en", 0 as "em"
            from "subscriptions" where "started_at" is not null and ("ended_at" is null or "ended_at" >= "started_at")
            union all
            select "organization_id",${by} "metrics_bucket"("ended_at"), "product_id", 0, 0, 1, "metrics_subscription_mrr"("amount", "recurring_interval")
            from "subscriptions" where "started_at" is not null and "ended_at" >= "started_at"
          ) d
          group by ${by ? '1, 2, 3, 4' : '1, 2, 3'};`;
  return [
    `create or replace function "metrics_order_apply"(f "metrics_order_facts", sign int) returns void language plpgsql as $$
      declare
        c int;
        g int;
        lim int[] := array[104, 680, 3072, 35232];
      begin
        if f is null or f."order_id" is null then return; end if;
        for c in 0 .. 3 loop
          g := lim[c + 1];
          insert into "metrics_order_buckets" as b values (
            f."organization_id", c, f."bucket", f."product_id", f."kind",${gaps('renew_bucket_org', 'renew_bucket_product', 'g')},
            sign, sign * f."net")
          on conflict (${orderKey})
          do update set "n" = b."n" + excluded."n", "net" = b."net" + excluded."net";${customer ? `
          insert into "metrics_customer_order_buckets" as b values (
            f."organization_id", f."customer_id", c, f."bucket", f."product_id", f."kind",${gaps('renew_bucket_customer', 'renew_bucket_customer_product', 'g')},
            sign, sign * f."net")
          on conflict (${customerKey})
          do update set "n" = b."n" + excluded."n", "net" = b."net" + excluded."net";` : ''}
        end loop;
        if sign < 0 then
          delete from "metrics_order_buckets" where "organization_id" = f."organization_id" and "bucket" = f."bucket"
            and "product_id" = f."product_id" and "n" = 0;${customer ? `
          delete from "metrics_customer_order_buckets" where "organization_id" = f."organization_id" and "customer_id" = f."customer_id"
            and "bucket" = f."bucket" and "product_id" = f."product_id" and "n" = 0;` : ''}
        end if;
      end $$;`,
    `create or replace function "metrics_order_refresh"(oid uuid) returns void language plpgsql as $$
      declare
        old_f "metrics_order_facts";
        new_f "metrics_order_facts";
      begin
        select * into old_f from "metrics_order_facts" where "order_id" = oid for update;
        select ${factsSelect(previousOf)}
          into new_f
          from "orders" o left join "subscriptions" s on s."id" = o."subscription_id"
          where o."id" = oid and o."status" <> 'pending';
        if old_f."order_id" is not distinct from new_f."order_id" and old_f is not distinct from new_f then return; end if;
        perform "metrics_order_apply"(old_f, -1);
        perform "metrics_order_apply"(new_f, 1);
        delete from "metrics_order_facts" where "order_id" = oid;
        if new_f."order_id" is not null then
          insert into "metrics_order_facts" values (new_f.*);
        end if;
      end $$;`,
    `create or replace function "metrics_subscriptions_changed"() returns trigger language plpgsql as $$
      declare
        r record;
      begin
        if tg_op <> 'INSERT' then
          perform "metrics_subscription_apply"(old."organization_id", old."product_id", old."started_at", old."ended_at",
            "metrics_subscription_mrr"(old."amount", old."recurring_interval"), -1);${customer ? `
          perform "metrics_customer_subscription_apply"(old."organization_id", old."customer_id", old."product_id", old."started_at",
            old."ended_at", "metrics_subscription_mrr"(old."amount", old."recurring_interval"), -1);` : ''}
        end if;
        if tg_op <> 'DELETE' then
          perform "metrics_subscription_apply"(new."organization_id", new."product_id", new."started_at", new."ended_at",
            "metrics_subscription_mrr"(new."amount", new."recurring_interval"), 1);${customer ? `
          perform "metrics_customer_subscription_apply"(new."organization_id", new."customer_id", new."product_id", new."started_at",
            new."ended_at", "metrics_subscription_mrr"(new."amount", new."recurring_interval"), 1);` : ''}
        end if;
        if tg_op = 'UPDATE' and old."started_at" is distinct from new."started_at" then
          for r in select p."id" from "orders" p where p."subscription_id" = new."id" loop
            perform "metrics_order_refresh"(r."id");
          end loop;
        end if;
        return null;
      end $$;`,
    `create or replace function "metrics_rebuild"() returns void language plpgsql as $$
      begin
        delete from "metrics_order_facts";
        delete from "metrics_order_buckets";
        delete from "metrics_subscription_buckets";${customer ? `
        delete from "metrics_customer_order_buckets";
        delete from "metrics_customer_subscription_buckets";` : ''}
        insert into "metrics_order_facts"
          select ${factsSelect(lagOf)}
          from "orders" o left join "subscriptions" s on s."id" = o."subscription_id"
          where o."status" <> 'pending';
        insert into "metrics_order_buckets"
          select f."organization_id", c."class", f."bucket", f."product_id", f."kind",${gaps('renew_bucket_org', 'renew_bucket_product', 'c."g"')},
                 count(*), sum(f."net")
          from "metrics_order_facts" f
          cross join (values (0, 104), (1, 680), (2, 3072), (3, 35232)) as c("class", "g")
          group by 1, 2, 3, 4, 5, 6, 7, 8;${customer ? `
        insert into "metrics_customer_order_buckets"
          select f."organization_id", f."customer_id", c."class", f."bucket", f."product_id", f."kind",${gaps('renew_bucket_customer', 'renew_bucket_customer_product', 'c."g"')},
                 count(*), sum(f."net")
          from "metrics_order_facts" f
          cross join (values (0, 104), (1, 680), (2, 3072), (3, 35232)) as c("class", "g")
          group by 1, 2, 3, 4, 5, 6, 7, 8, 9;` : ''}
        insert into "metrics_subscription_buckets"${subscriptionRows('')}${customer ? `
        insert into "metrics_customer_subscription_buckets"${subscriptionRows(' "customer_id",')}` : ''}
      end $$;`,
  ];
}

const ORDER_COLUMNS = `"status", "created_at", "net_amount", "organization_id", "product_id", "subscription_id"`;
const SUBSCRIPTION_COLUMNS = `"started_at", "ended_at", "amount", "recurring_interval", "organization_id", "product_id"`;
const changed = (columns: string) =>
  columns
    .split(', ')
    .map((c) => `old.${c} is distinct from new.${c}`)
    .join(' or ');

/** The two update triggers, watching the customer too (`customer` true) or not. */
function updateTriggers(customer: boolean): string[] {
  const orders = customer ? `${ORDER_COLUMNS}, "customer_id"` : ORDER_COLUMNS;
  const subscriptions = customer ? `${SUBSCRIPTION_COLUMNS}, "customer_id"` : SUBSCRIPTION_COLUMNS;
  return [
    `drop trigger "orders_metrics_update" on "orders";`,
    `drop trigger "subscriptions_metrics_update" on "subscriptions";`,
    `create constraint trigger "orders_metrics_update" after update of ${orders} on "orders" deferrable initially deferred
      for each row when (${changed(orders)}) execute function "metrics_orders_changed"();`,
    `create constraint trigger "subscriptions_metrics_update" after update of ${subscriptions} on "subscriptions" deferrable initially deferred
      for each row when (${changed(subscriptions)}) execute function "metrics_subscriptions_changed"();`,
  ];
}

export class Migration20261126021514 extends Migration {

  override name = 'Migration20261126021514';

  // Per-customer metrics aggregates (docs/performance.md, metrics): a customer filter is answered
  // from the customer's quarter-hour rows, kept by the same deferred triggers, instead of the
  // customer's orders and their subscriptions.
  override up(): void | Promise<void> {
    this.addSql(`alter table "metrics_order_facts" add column "customer_id" uuid, add column "renew_bucket_customer" int,
      add column "renew_bucket_customer_product" int;`);
    this.addSql(`create table "metrics_customer_order_buckets" (
      "organization_id" uuid not null, "customer_id" uuid not null, "class" smallint not null, "bucket" int not null,
      "product_id" uuid not null, "kind" smallint not null, "start_gap" int not null, "renew_gap_org" int not null,
      "renew_gap_product" int not null, "n" bigint not null, "net" bigint not null,
      primary key ("organization_id", "customer_id", "class", "bucket", "product_id", "kind", "start_gap", "renew_gap_org", "renew_gap_product"));`);
    this.addSql(`create table "metrics_customer_subscription_buckets" (
      "organization_id" uuid not null, "customer_id" uuid not null, "bucket" int not null, "product_id" uuid not null,
      "started_n" bigint not null default 0, "started_mrr" bigint not null default 0,
      "ended_n" bigint not null default 0, "ended_mrr" bigint not null default 0,
      primary key ("organization_id", "customer_id", "bucket", "product_id"));`);
    this.addSql(`create or replace function "metrics_customer_subscription_apply"(org uuid, customer uuid, product uuid, started timestamptz,
        ended timestamptz, mrr bigint, sign int) returns void language plpgsql as $$
      begin
        if started is null or ended < started then return; end if;
        insert into "metrics_customer_subscription_buckets" as b values (org, customer, "metrics_bucket"(started), product, sign, sign * mrr, 0, 0)
          on conflict ("organization_id", "customer_id", "bucket", "product_id")
          do update set "started_n" = b."started_n" + excluded."started_n", "started_mrr" = b."started_mrr" + excluded."started_mrr";
        if ended is not null then
          insert into "metrics_customer_subscription_buckets" as b values (org, customer, "metrics_bucket"(ended), product, 0, 0, sign, sign * mrr)
            on conflict ("organization_id", "customer_id", "bucket", "product_id")
            do update set "ended_n" = b."ended_n" + excluded."ended_n", "ended_mrr" = b."ended_mrr" + excluded."ended_mrr";
        end if;
        if sign < 0 then
          delete from "metrics_customer_subscription_buckets" where "organization_id" = org and "customer_id" = customer
            and "product_id" = product and "bucket" in ("metrics_bucket"(started), "metrics_bucket"(ended))
            and "started_n" = 0 and "ended_n" = 0 and "started_mrr" = 0 and "ended_mrr" = 0;
        end if;
      end $$;`);
    for (const sql of [...functions(true), ...updateTriggers(true)]) this.addSql(sql);
    this.addSql(`select "metrics_rebuild"();`);
  }

  override down(): void | Promise<void> {
    for (const sql of [...updateTriggers(false), ...functions(false)]) this.addSql(sql);
    this.addSql(`drop function if exists "metrics_customer_subscription_apply"(uuid, uuid, uuid, timestamptz, timestamptz, bigint, int);`);
    this.addSql(`drop table if exists "metrics_customer_subscription_buckets";`);
    this.addSql(`drop table if exists "metrics_customer_order_buckets";`);
    this.addSql(`alter table "metrics_order_facts" drop column "customer_id", drop column "renew_bucket_customer",
      drop column "renew_bucket_customer_product";`);
    this.addSql(`select "metrics_rebuild"();`);
  }

}
