import { Migration } from '@mikro-orm/migrations';

export class Migration20261125231500 extends Migration {

  override name = 'Migration20261125231500';

  // Metrics aggregates kept by triggers on orders and subscriptions (docs/performance.md, metrics):
  // 15-minute buckets (every time zone's day, week, month and year starts on a quarter hour since
  // the 1970s), per organization and product. Orders: one fact row per paid order
  // (metrics_order_facts: its bucket, its subscription's start bucket, and the bucket of the later
  // of that start and the subscription's previous paid order, in the organization and in the
  // product), summed into metrics_order_buckets once per period class (hour/day, week, month, year)
  // with the gaps to those buckets clamped to the longest period of the class, so "started before
  // the period" and "first order of the subscription in the period" can be answered from the sums.
  // Subscriptions: starts and ends per bucket (metrics_subscription_buckets); a subscription
  // recorded as ending before it started is left to the raw rows (partial index).
  override up(): void | Promise<void> {
    this.addSql(`create table "metrics_order_facts" (
      "order_id" uuid primary key, "organization_id" uuid not null, "product_id" uuid not null,
      "bucket" int not null, "kind" smallint not null, "start_bucket" int, "renew_bucket_org" int,
      "renew_bucket_product" int, "net" bigint not null);`);
    this.addSql(`create table "metrics_order_buckets" (
      "organization_id" uuid not null, "class" smallint not null, "bucket" int not null, "product_id" uuid not null,
      "kind" smallint not null, "start_gap" int not null, "renew_gap_org" int not null, "renew_gap_product" int not null,
      "n" bigint not null, "net" bigint not null,
      primary key ("organization_id", "class", "bucket", "product_id", "kind", "start_gap", "renew_gap_org", "renew_gap_product"));`);
    this.addSql(`create table "metrics_subscription_buckets" (
      "organization_id" uuid not null, "bucket" int not null, "product_id" uuid not null,
      "started_n" bigint not null default 0, "started_mrr" bigint not null default 0,
      "ended_n" bigint not null default 0, "ended_mrr" bigint not null default 0,
      primary key ("organization_id", "bucket", "product_id"));`);
    this.addSql(`create index "subscriptions_metrics_ended_before_start_index" on "subscriptions" ("organization_id") where "ended_at" < "started_at";`);
    this.addSql(`create or replace function "metrics_bucket"(t timestamptz) returns int language sql immutable as $$
      select floor(extract(epoch from t) / 900)::int $$;`);
    this.addSql(`create or replace function "metrics_order_apply"(f "metrics_order_facts", sign int) returns void language plpgsql as $$
      declare
        c int;
        g int;
        lim int[] := array[104, 680, 3072, 35232];
      begin
        if f is null or f."order_id" is null then return; end if;
        for c in 0 .. 3 loop
          g := lim[c + 1];
          insert into "metrics_order_buckets" as b values (
            f."organization_id", c, f."bucket", f."product_id", f."kind",
            case when f."kind" = 1 then greatest(-g, least(g, f."bucket" - f."start_bucket")) else 0 end,
            case when f."kind" = 1 then greatest(-g, least(g, f."bucket" - f."renew_bucket_org")) else 0 end,
            case when f."kind" = 1 then greatest(-g, least(g, f."bucket" - f."renew_bucket_product")) else 0 end,
            sign, sign * f."net")
          on conflict ("organization_id", "class", "bucket", "product_id", "kind", "start_gap", "renew_gap_org", "renew_gap_product")
          do update set "n" = b."n" + excluded."n", "net" = b."net" + excluded."net";
        end loop;
        if sign < 0 then
          delete from "metrics_order_buckets" where "organization_id" = f."organization_id" and "bucket" = f."bucket"
            and "product_id" = f."product_id" and "n" = 0;
        end if;
      end $$;`);
    this.addSql(`create or replace function "metrics_order_refresh"(oid uuid) returns void language plpgsql as $$
      declare
        old_f "metrics_order_facts";
        new_f "metrics_order_facts";
      begin
        select * into old_f from "metrics_order_facts" where "order_id" = oid for update;
        select o."id", o."organization_id", o."product_id", "metrics_bucket"(o."created_at"),
               case when o."subscription_id" is null then 0 when s."started_at" is null then 2 else 1 end,
               "metrics_bucket"(s."started_at"),
               greatest("metrics_bucket"(s."started_at"), (select "metrics_bucket"(max(p."created_at")) from "orders" p
                 where p."subscription_id" = o."subscription_id" and p."organization_id" = o."organization_id"
                   and p."status" <> 'pending' and (p."created_at", p."id") < (o."created_at", o."id"))),
               greatest("metrics_bucket"(s."started_at"), (select "metrics_bucket"(max(p."created_at")) from "orders" p
                 where p."subscription_id" = o."subscription_id" and p."organization_id" = o."organization_id"
                   and p."product_id" = o."product_id"
                   and p."status" <> 'pending' and (p."created_at", p."id") < (o."created_at", o."id"))),
               o."net_amount"
          into new_f
          from "orders" o left join "subscriptions" s on s."id" = o."subscription_id"
          where o."id" = oid and o."status" <> 'pending';
        if old_f."order_id" is not distinct from new_f."order_id" and old_f is not distinct from new_f then return; end if;
        perform "metrics_order_apply"(old_f, -1);
        perform "metrics_order_apply"(new_f, 1);
        if new_f."order_id" is null then
          delete from "metrics_order_facts" where "order_id" = oid;
        else
          insert into "metrics_order_facts" values (new_f.*) on conflict ("order_id") do update set
            "organization_id" = excluded."organization_id", "product_id" = excluded."product_id", "bucket" = excluded."bucket",
            "kind" = excluded."kind", "start_bucket" = excluded."start_bucket", "renew_bucket_org" = excluded."renew_bucket_org",
            "renew_bucket_product" = excluded."renew_bucket_product", "net" = excluded."net";
        end if;
      end $$;`);
    // An order's change can move the previous-order bucket of the subscription's later orders: those are refreshed too.
    this.addSql(`create or replace function "metrics_orders_changed"() returns trigger language plpgsql as $$
      declare
        r record;
      begin
        if tg_op <> 'INSERT' then
          if old."subscription_id" is null then
            perform "metrics_order_refresh"(old."id");
          else
            for r in select p."id" from "orders" p where p."subscription_id" = old."subscription_id"
                       and (p."created_at", p."id") > (old."created_at", old."id") loop
              perform "metrics_order_refresh"(r."id");
            end loop;
            perform "metrics_order_refresh"(old."id");
          end if;
        end if;
        if tg_op <> 'DELETE' then
          if new."subscription_id" is null then
            perform "metrics_order_refresh"(new."id");
          else
            for r in select p."id" from "orders" p where p."subscription_id" = new."subscription_id"
                       and (p."created_at", p."id") >= (new."created_at", new."id") loop
              perform "metrics_order_refresh"(r."id");
            end loop;
          end if;
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger "orders_metrics_insert_delete" after insert or delete on "orders"
      for each row execute function "metrics_orders_changed"();`);
    this.addSql(`create trigger "orders_metrics_update" after update of "status", "created_at", "net_amount", "organization_id", "product_id", "subscription_id" on "orders"
      for each row when (old."status" is distinct from new."status" or old."created_at" is distinct from new."created_at"
        or old."net_amount" is distinct from new."net_amount" or old."organization_id" is distinct from new."organization_id"
        or old."product_id" is distinct from new."product_id" or old."subscription_id" is distinct from new."subscription_id")
      execute function "metrics_orders_changed"();`);
    this.addSql(`create or replace function "metrics_subscription_apply"(org uuid, product uuid, started timestamptz, ended timestamptz,
        mrr bigint, sign int) returns void language plpgsql as $$
      begin
        if started is null or ended < started then return; end if;
        insert into "metrics_subscription_buckets" as b values (org, "metrics_bucket"(started), product, sign, sign * mrr, 0, 0)
          on conflict ("organization_id", "bucket", "product_id")
          do update set "started_n" = b."started_n" + excluded."started_n", "started_mrr" = b."started_mrr" + excluded."started_mrr";
        if ended is not null then
          insert into "metrics_subscription_buckets" as b values (org, "metrics_bucket"(ended), product, 0, 0, sign, sign * mrr)
            on conflict ("organization_id", "bucket", "product_id")
            do update set "ended_n" = b."ended_n" + excluded."ended_n", "ended_mrr" = b."ended_mrr" + excluded."ended_mrr";
        end if;
        if sign < 0 then
          delete from "metrics_subscription_buckets" where "organization_id" = org and "product_id" = product
            and "bucket" in ("metrics_bucket"(started), "metrics_bucket"(ended))
            and "started_n" = 0 and "ended_n" = 0 and "started_mrr" = 0 and "ended_mrr" = 0;
        end if;
      end $$;`);
    this.addSql(`create or replace function "metrics_subscription_mrr"(amount int, recurring text) returns bigint language sql immutable as $$
      select case when recurring = 'year' then round(amount::numeric / 12) else amount end::bigint $$;`);
    this.addSql(`create or replace function "metrics_subscriptions_changed"() returns trigger language plpgsql as $$
      declare
        r record;
      begin
        if tg_op <> 'INSERT' then
          perform "metrics_subscription_apply"(old."organization_id", old."product_id", old."started_at", old."ended_at",
            "metrics_subscription_mrr"(old."amount", old."recurring_interval"), -1);
        end if;
        if tg_op <> 'DELETE' then
          perform "metrics_subscription_apply"(new."organization_id", new."product_id", new."started_at", new."ended_at",
            "metrics_subscription_mrr"(new."amount", new."recurring_interval"), 1);
        end if;
        if tg_op = 'UPDATE' and old."started_at" is distinct from new."started_at" then
          for r in select p."id" from "orders" p where p."subscription_id" = new."id" loop
            perform "metrics_order_refresh"(r."id");
          end loop;
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger "subscriptions_metrics_insert_delete" after insert or delete on "subscriptions"
      for each row execute function "metrics_subscriptions_changed"();`);
    this.addSql(`create trigger "subscriptions_metrics_update" after update of "started_at", "ended_at", "amount", "recurring_interval", "organization_id", "product_id" on "subscriptions"
      for each row when (old."started_at" is distinct from new."started_at" or old."ended_at" is distinct from new."ended_at"
        or old."amount" is distinct from new."amount" or old."recurring_interval" is distinct from new."recurring_interval"
        or old."organization_id" is distinct from new."organization_id" or old."product_id" is distinct from new."product_id")
      execute function "metrics_subscriptions_changed"();`);
    // Set-based rebuild (the backfill below, and bulk loads written with the triggers off).
    this.addSql(`create or replace function "metrics_rebuild"() returns void language plpgsql as $$
      begin
        delete from "metrics_order_facts";
        delete from "metrics_order_buckets";
        delete from "metrics_subscription_buckets";
        insert into "metrics_order_facts"
          select o."id", o."organization_id", o."product_id", "metrics_bucket"(o."created_at"),
                 case when o."subscription_id" is null then 0 when s."started_at" is null then 2 else 1 end,
                 "metrics_bucket"(s."started_at"),
                 greatest("metrics_bucket"(s."started_at"), "metrics_bucket"(lag(o."created_at") over (
                   partition by o."subscription_id", o."organization_id" order by o."created_at", o."id"))),
                 greatest("metrics_bucket"(s."started_at"), "metrics_bucket"(lag(o."created_at") over (
                   partition by o."subscription_id", o."organization_id", o."product_id" order by o."created_at", o."id"))),
                 o."net_amount"
          from "orders" o left join "subscriptions" s on s."id" = o."subscription_id"
          where o."status" <> 'pending';
        insert into "metrics_order_buckets"
          select f."organization_id", c."class", f."bucket", f."product_id", f."kind",
                 case when f."kind" = 1 then greatest(-c."g", least(c."g", f."bucket" - f."start_bucket")) else 0 end,
                 case when f."kind" = 1 then greatest(-c."g", least(c."g", f."bucket" - f."renew_bucket_org")) else 0 end,
                 case when f."kind" = 1 then greatest(-c."g", least(c."g", f."bucket" - f."renew_bucket_product")) else 0 end,
                 count(*), sum(f."net")
          from "metrics_order_facts" f
          cross join (values (0, 104), (1, 680), (2, 3072), (3, 35232)) as c("class", "g")
          group by 1, 2, 3, 4, 5, 6, 7, 8;
        insert into "metrics_subscription_buckets"
          select "organization_id", "bucket", "product_id", sum("sn"), sum("sm"), sum("en"), sum("em")
          from (
            select "organization_id", "metrics_bucket"("started_at") as "bucket", "product_id", 1 as "sn",
                   "metrics_subscription_mrr"("amount", "recurring_interval") as "sm", 0 as "en", 0 as "em"
            from "subscriptions" where "started_at" is not null and ("ended_at" is null or "ended_at" >= "started_at")
            union all
            select "organization_id", "metrics_bucket"("ended_at"), "product_id", 0, 0, 1, "metrics_subscription_mrr"("amount", "recurring_interval")
            from "subscriptions" where "started_at" is not null and "ended_at" >= "started_at"
          ) d
          group by 1, 2, 3;
      end $$;`);
    this.addSql(`select "metrics_rebuild"();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "orders_metrics_insert_delete" on "orders";`);
    this.addSql(`drop trigger if exists "orders_metrics_update" on "orders";`);
    this.addSql(`drop trigger if exists "subscriptions_metrics_insert_delete" on "subscriptions";`);
    this.addSql(`drop trigger if exists "subscriptions_metrics_update" on "subscriptions";`);
    this.addSql(`drop function if exists "metrics_rebuild"();`);
    this.addSql(`drop function if exists "metrics_subscriptions_changed"();`);
    this.addSql(`drop function if exists "metrics_subscription_mrr"(int, text);`);
    this.addSql(`drop function if exists "metrics_subscription_apply"(uuid, uuid, timestamptz, timestamptz, bigint, int);`);
    this.addSql(`drop function if exists "metrics_orders_changed"();`);
    this.addSql(`drop function if exists "metrics_order_refresh"(uuid);`);
    this.addSql(`drop function if exists "metrics_order_apply"("metrics_order_facts", int);`);
    this.addSql(`drop function if exists "metrics_bucket"(timestamptz);`);
    this.addSql(`drop index if exists "subscriptions_metrics_ended_before_start_index";`);
    this.addSql(`drop table if exists "metrics_subscription_buckets";`);
    this.addSql(`drop table if exists "metrics_order_buckets";`);
    this.addSql(`drop table if exists "metrics_order_facts";`);
  }

}
