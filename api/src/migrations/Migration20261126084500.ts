import { Migration } from '@mikro-orm/migrations';

/**
 * Coarser metrics aggregates, so a read's rows do not grow with the orders and subscriptions
 * (docs/performance.md, metrics):
 * - `metrics_order_hours` / `metrics_customer_order_hours`: the hour/day class (0) of
 *   `metrics_order_buckets` / `metrics_customer_order_buckets` per UTC hour. `bucket` is the hour's
 *   first quarter hour and the gaps are measured from it (clamped like class 0), so a statement
 *   reads an hour that lies within one period exactly as it reads a quarter-hour row. Kept by a
 *   trigger on `metrics_order_facts` (every change of an order's facts is a delete and an insert).
 * - `metrics_subscription_coarse` / `metrics_customer_subscription_coarse`: starts and ends per hour
 *   (`grain` 4) and per UTC day (`grain` 96), kept by their own deferred triggers on subscriptions;
 *   a read takes the days before its range from the day rows.
 * `metrics_rebuild()` builds them too (set-based, with the facts' trigger off), in key order, so one
 * customer's rows of a range share heap pages.
 */
const ORDER_HOUR_KEY = `"organization_id", "bucket", "product_id", "kind", "start_gap", "renew_gap_org", "renew_gap_product"`;
const CUSTOMER_ORDER_HOUR_KEY = `"organization_id", "customer_id", "bucket", "product_id", "kind", "start_gap", "renew_gap_org", "renew_gap_product"`;
const SUB_COARSE_KEY = `"organization_id", "grain", "bucket", "product_id"`;
const CUSTOMER_SUB_COARSE_KEY = `"organization_id", "customer_id", "grain", "bucket", "product_id"`;
const SUBSCRIPTION_COLUMNS = ['started_at', 'ended_at', 'amount', 'recurring_interval', 'organization_id', 'product_id', 'customer_id'];

const gap = (hour: string, of: string) => `case when f."kind" = 1 then greatest(-104, least(104, ${hour} - f."${of}")) else 0 end`;
const hourOf = (b: string) => `(${b} & -4)`;

/** metrics_rebuild(): Migration20261126083500's, plus the coarse tables (`coarse`). */
function rebuild(coarse: boolean): string {
  const keys: [string, string][] = [
    ['metrics_order_facts', '"order_id"'],
    ['metrics_order_buckets', '"organization_id", "class", "bucket", "product_id", "kind", "start_gap", "renew_gap_org", "renew_gap_product"'],
    ['metrics_subscription_buckets', '"organization_id", "bucket", "product_id"'],
    [
      'metrics_customer_order_buckets',
      '"organization_id", "customer_id", "class", "bucket", "product_id", "kind", "start_gap", "renew_gap_org", "renew_gap_product"',
    ],
    ['metrics_customer_subscription_buckets', '"organization_id", "customer_id", "bucket", "product_id"'],
    ...((coarse
      ? [
          ['metrics_order_hours', ORDER_HOUR_KEY],
          ['metrics_customer_order_hours', CUSTOMER_ORDER_HOUR_KEY],
          ['metrics_subscription_coarse', SUB_COARSE_KEY],
          ['metrics_customer_subscription_coarse', CUSTOMER_SUB_COARSE_KEY],
        ]
      : []) as [string, string][]),
  ];
  const lag = (extra: string) => `greatest("metrics_bucket"(s."started_at"), "metrics_bucket"(lag(o."created_at") over (
                   partition by o."subscription_id", o."organization_id"${extra} order by o."created_at", o."id")))`;
  const gaps = (org: string, product: string) => `
            case when f."kind" = 1 then greatest(-c."g", least(c."g", f."bucket" - f."start_bucket")) else 0 end,
            case when f."kind" = 1 then greatest(-c."g", least(c."g", f."bucket" - f."${org}")) else 0 end,
            case when f."kind" = 1 then greatest(-c."g", least(c."g", f."bucket" - f."${product}")) else 0 end`;
  const subscriptionEvents = (by: string, bucket: (b: string) => string) => `
          from (
            select "organization_id",${by} ${bucket(`"metrics_bucket"("started_at")`)} as "bucket", "product_id", 1 as "sn",
                   "metrics_subscription_mrr"("amount", "recurring_interval") as "sm", 0 as "en", 0 as "em"
            from "subscriptions" where "started_at" is not null and ("ended_at" is null or "ended_at" >= "started_at")
            union all
            select "organization_id",${by} ${bucket(`"metrics_bucket"("ended_at")`)}, "product_id", 0, 0, 1, "metrics_subscription_mrr"("amount", "recurring_interval")
            from "subscriptions" where "started_at" is not null and "ended_at" >= "started_at"
          ) d`;
  const subscriptionRows = (by: string) => `
          select "organization_id",${by} "bucket", "product_id", sum("sn"), sum("sm"), sum("en"), sum("em")${subscriptionEvents(by, (b) => b)}
          group by ${by ? '1, 2, 3, 4' : '1, 2, 3'};`;
  const coarseRows = (by: string) => `
          select "organization_id",${by} g."grain", "metrics_floor"(d."bucket", g."grain"), "product_id", sum("sn"), sum("sm"), sum("en"), sum("em")${subscriptionEvents(by, (b) => b)}
          cross join (values (4), (96)) as g("grain")
          group by ${by ? '1, 2, 3, 4, 5' : '1, 2, 3, 4'}
          order by ${by ? '1, 2, 3, 4, 5' : '1, 2, 3, 4'};`;
  const hourRows = (customer: boolean) => `
          select f."organization_id",${customer ? ' f."customer_id",' : ''} ${hourOf('f."bucket"')}, f."product_id", f."kind",
                 ${gap(hourOf('f."bucket"'), 'start_bucket')},
                 ${gap(hourOf('f."bucket"'), customer ? 'renew_bucket_customer' : 'renew_bucket_org')},
                 ${gap(hourOf('f."bucket"'), customer ? 'renew_bucket_customer_product' : 'renew_bucket_product')},
                 count(*), sum(f."net")
          from "metrics_order_facts" f
          group by ${customer ? '1, 2, 3, 4, 5, 6, 7, 8' : '1, 2, 3, 4, 5, 6, 7'}
          order by ${customer ? '1, 2, 3, 4, 5, 6, 7, 8' : '1, 2, 3, 4, 5, 6, 7'};`;
  return `create or replace function "metrics_rebuild"() returns void language plpgsql as $$
      begin
        perform set_config('work_mem', '256MB', true);
        perform set_config('maintenance_work_mem', '512MB', true);
        truncate ${keys.map(([t]) => `"${t}"`).join(', ')};
        ${keys.map(([t]) => `alter table "${t}" drop constraint "${t}_pkey";`).join('\n        ')}${coarse ? `
        alter table "metrics_order_facts" disable trigger "metrics_order_facts_hours";` : ''}
        insert into "metrics_order_facts"
          select o."id", o."organization_id", o."product_id", "metrics_bucket"(o."created_at"),
                 case when o."subscription_id" is null then 0 when s."started_at" is null then 2 else 1 end,
                 "metrics_bucket"(s."started_at"),
                 ${lag('')},
                 ${lag(', o."product_id"')},
                 o."net_amount", o."customer_id",
                 ${lag(', o."customer_id"')},
                 ${lag(', o."customer_id", o."product_id"')}
          from "orders" o left join "subscriptions" s on s."id" = o."subscription_id"
          where o."status" <> 'pending';${coarse ? `
        alter table "metrics_order_facts" enable trigger "metrics_order_facts_hours";` : ''}
        insert into "metrics_order_buckets"
          select f."organization_id", c."class", f."bucket", f."product_id", f."kind",${gaps('renew_bucket_org', 'renew_bucket_product')},
                 count(*), sum(f."net")
          from "metrics_order_facts" f
          cross join (values (0, 104), (1, 680), (2, 3072), (3, 35232)) as c("class", "g")
          group by 1, 2, 3, 4, 5, 6, 7, 8;
        insert into "metrics_customer_order_buckets"
          select f."organization_id", f."customer_id", c."class", f."bucket", f."product_id", f."kind",${gaps('renew_bucket_customer', 'renew_bucket_customer_product')},
                 count(*), sum(f."net")
          from "metrics_order_facts" f
          cross join (values (0, 104), (1, 680), (2, 3072), (3, 35232)) as c("class", "g")
          group by 1, 2, 3, 4, 5, 6, 7, 8, 9;
        insert into "metrics_subscription_buckets"${subscriptionRows('')}
        insert into "metrics_customer_subscription_buckets"${subscriptionRows(' "customer_id",')}${coarse ? `
        insert into "metrics_order_hours"${hourRows(false)}
        insert into "metrics_customer_order_hours"${hourRows(true)}
        insert into "metrics_subscription_coarse"${coarseRows('')}
        insert into "metrics_customer_subscription_coarse"${coarseRows(' "customer_id",')}` : ''}
        ${keys.map(([t, k]) => `alter table "${t}" add constraint "${t}_pkey" primary key (${k});`).join('\n        ')}
      end $$;`;
}

export class Migration20261126084500 extends Migration {

  override name = 'Migration20261126084500';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function "metrics_floor"(b int, g int) returns int language sql immutable as $$
      select b - ((b % g) + g) % g $$;`);
    this.addSql(`create table "metrics_order_hours" (
      "organization_id" uuid not null, "bucket" int not null, "product_id" uuid not null, "kind" smallint not null,
      "start_gap" int not null, "renew_gap_org" int not null, "renew_gap_product" int not null, "n" bigint not null, "net" bigint not null,
      constraint "metrics_order_hours_pkey" primary key (${ORDER_HOUR_KEY}));`);
    this.addSql(`create table "metrics_customer_order_hours" (
      "organization_id" uuid not null, "customer_id" uuid not null, "bucket" int not null, "product_id" uuid not null, "kind" smallint not null,
      "start_gap" int not null, "renew_gap_org" int not null, "renew_gap_product" int not null, "n" bigint not null, "net" bigint not null,
      constraint "metrics_customer_order_hours_pkey" primary key (${CUSTOMER_ORDER_HOUR_KEY}));`);
    for (const [table, customer] of [
      ['metrics_subscription_coarse', false],
      ['metrics_customer_subscription_coarse', true],
    ] as const) {
      this.addSql(`create table "${table}" (
        "organization_id" uuid not null,${customer ? ' "customer_id" uuid not null,' : ''} "grain" smallint not null, "bucket" int not null,
        "product_id" uuid not null, "started_n" bigint not null default 0, "started_mrr" bigint not null default 0,
        "ended_n" bigint not null default 0, "ended_mrr" bigint not null default 0,
        constraint "${table}_pkey" primary key (${customer ? CUSTOMER_SUB_COARSE_KEY : SUB_COARSE_KEY}));`);
    }
    const upsertHour = (customer: boolean) => `
          insert into "${customer ? 'metrics_customer_order_hours' : 'metrics_order_hours'}" as b values (
            f."organization_id",${customer ? ' f."customer_id",' : ''} h, f."product_id", f."kind",
            ${gap('h', 'start_bucket')},
            ${gap('h', customer ? 'renew_bucket_customer' : 'renew_bucket_org')},
            ${gap('h', customer ? 'renew_bucket_customer_product' : 'renew_bucket_product')},
            sign, sign * f."net")
          on conflict (${customer ? CUSTOMER_ORDER_HOUR_KEY : ORDER_HOUR_KEY})
          do update set "n" = b."n" + excluded."n", "net" = b."net" + excluded."net";`;
    this.addSql(`create or replace function "metrics_order_hours_apply"(f "metrics_order_facts", sign int) returns void language plpgsql as $$
      declare
        h int := ${hourOf('f."bucket"')};
      begin
        ${upsertHour(false)}
        ${upsertHour(true)}
        if sign < 0 then
          delete from "metrics_order_hours" where "organization_id" = f."organization_id" and "bucket" = h
            and "product_id" = f."product_id" and "n" = 0;
          delete from "metrics_customer_order_hours" where "organization_id" = f."organization_id" and "customer_id" = f."customer_id"
            and "bucket" = h and "product_id" = f."product_id" and "n" = 0;
        end if;
      end $$;`);
    this.addSql(`create or replace function "metrics_order_facts_changed"() returns trigger language plpgsql as $$
      begin
        if tg_op = 'DELETE' then
          perform "metrics_order_hours_apply"(old, -1);
        else
          perform "metrics_order_hours_apply"(new, 1);
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger "metrics_order_facts_hours" after insert or delete on "metrics_order_facts"
      for each row execute function "metrics_order_facts_changed"();`);
    const upsertSub = (customer: boolean, at: 'sb' | 'eb', cols: string) => `
            insert into "${customer ? 'metrics_customer_subscription_coarse' : 'metrics_subscription_coarse'}" as b
              values (org,${customer ? ' customer,' : ''} g, "metrics_floor"(${at}, g), product, ${at === 'sb' ? 'sign, sign * mrr, 0, 0' : '0, 0, sign, sign * mrr'})
              on conflict (${customer ? CUSTOMER_SUB_COARSE_KEY : SUB_COARSE_KEY})
              do update set "${cols}_n" = b."${cols}_n" + excluded."${cols}_n", "${cols}_mrr" = b."${cols}_mrr" + excluded."${cols}_mrr";`;
    this.addSql(`create or replace function "metrics_subscription_coarse_apply"(org uuid, customer uuid, product uuid, started timestamptz,
        ended timestamptz, mrr bigint, sign int) returns void language plpgsql as $$
      declare
        g int;
        sb int := "metrics_bucket"(started);
        eb int := "metrics_bucket"(ended);
      begin
        if started is null or ended < started then return; end if;
        foreach g in array array[4, 96] loop
          ${upsertSub(false, 'sb', 'started')}
          ${upsertSub(true, 'sb', 'started')}
          if ended is not null then
            ${upsertSub(false, 'eb', 'ended')}
            ${upsertSub(true, 'eb', 'ended')}
          end if;
        end loop;
        if sign < 0 then
          delete from "metrics_subscription_coarse" where "organization_id" = org and "product_id" = product
            and "bucket" in ("metrics_floor"(sb, 4), "metrics_floor"(sb, 96), "metrics_floor"(eb, 4), "metrics_floor"(eb, 96))
            and "started_n" = 0 and "ended_n" = 0 and "started_mrr" = 0 and "ended_mrr" = 0;
          delete from "metrics_customer_subscription_coarse" where "organization_id" = org and "customer_id" = customer and "product_id" = product
            and "bucket" in ("metrics_floor"(sb, 4), "metrics_floor"(sb, 96), "metrics_floor"(eb, 4), "metrics_floor"(eb, 96))
            and "started_n" = 0 and "ended_n" = 0 and "started_mrr" = 0 and "ended_mrr" = 0;
        end if;
      end $$;`);
    const apply = (row: 'old' | 'new', sign: number) => `perform "metrics_subscription_coarse_apply"(${row}."organization_id", ${row}."customer_id",
            ${row}."product_id", ${row}."started_at", ${row}."ended_at", "metrics_subscription_mrr"(${row}."amount", ${row}."recurring_interval"), ${sign});`;
    this.addSql(`create or replace function "metrics_subscriptions_coarse_changed"() returns trigger language plpgsql as $$
      begin
        if tg_op <> 'INSERT' then
          ${apply('old', -1)}
        end if;
        if tg_op <> 'DELETE' then
          ${apply('new', 1)}
        end if;
        return null;
      end $$;`);
    this.addSql(`create constraint trigger "subscriptions_metrics_coarse_insert_delete" after insert or delete on "subscriptions"
      deferrable initially deferred for each row execute function "metrics_subscriptions_coarse_changed"();`);
    this.addSql(`create constraint trigger "subscriptions_metrics_coarse_update" after update of ${SUBSCRIPTION_COLUMNS.map((c) => `"${c}"`).join(', ')}
      on "subscriptions" deferrable initially deferred for each row
      when (${SUBSCRIPTION_COLUMNS.map((c) => `old."${c}" is distinct from new."${c}"`).join(' or ')})
      execute function "metrics_subscriptions_coarse_changed"();`);
    this.addSql(rebuild(true));
    this.addSql(`select "metrics_rebuild"();`);
  }

  override down(): void | Promise<void> {
    this.addSql(rebuild(false));
    this.addSql(`drop trigger "subscriptions_metrics_coarse_update" on "subscriptions";`);
    this.addSql(`drop trigger "subscriptions_metrics_coarse_insert_delete" on "subscriptions";`);
    this.addSql(`drop function "metrics_subscriptions_coarse_changed"();`);
    this.addSql(`drop function "metrics_subscription_coarse_apply"(uuid, uuid, uuid, timestamptz, timestamptz, bigint, int);`);
    this.addSql(`drop trigger "metrics_order_facts_hours" on "metrics_order_facts";`);
    this.addSql(`drop function "metrics_order_facts_changed"();`);
    this.addSql(`drop function "metrics_order_hours_apply"("metrics_order_facts", int);`);
    this.addSql(`drop table "metrics_customer_subscription_coarse", "metrics_subscription_coarse", "metrics_customer_order_hours", "metrics_order_hours";`);
    this.addSql(`drop function "metrics_floor"(int, int);`);
  }

}
