import { Migration } from '@mikro-orm/migrations';

/**
 * `metrics_customer_order_days`: one customer's paid orders per UTC day, for daily periods that are
 * UTC days (docs/performance.md, metrics). A row is read exactly like a quarter-hour row of class 0
 * whose period is that whole day: `bucket` is the day's first quarter hour, and each gap keeps only
 * what a day period can ask of it, measured from the day's start `d`: 1 when the subscription started
 * (or was last ordered) before the day, 0 within it, -96 after it (kind 1; 0 otherwise). So a day's
 * orders of one customer take a few rows instead of one per hour with orders (at 10 M orders, 51 rows
 * for 30 days instead of 721). The gaps use the customer's renewal buckets, as
 * `metrics_customer_order_hours`.
 *
 * Kept by a trigger on `metrics_order_facts` (every change of an order's facts is a delete and an
 * insert there). `metrics_rebuild()` becomes a wrapper: the previous rebuild with this trigger off,
 * then the day rows set-based from the facts.
 */
const KEY = `"organization_id", "customer_id", "bucket", "product_id", "kind", "start_gap", "renew_gap_org", "renew_gap_product"`;

const day = (f: string) => `"metrics_floor"(${f}."bucket", 96)`;
const gap = (f: string, of: string) =>
  `case when ${f}."kind" <> 1 then 0 when ${day(f)} > ${f}."${of}" then 1 when ${day(f)} > ${f}."${of}" - 96 then 0 else -96 end`;
const columns = (f: string) => `${f}."organization_id", ${f}."customer_id", ${day(f)}, ${f}."product_id", ${f}."kind",
            ${gap(f, 'start_bucket')}, ${gap(f, 'renew_bucket_customer')}, ${gap(f, 'renew_bucket_customer_product')}`;

export class Migration20261127024500 extends Migration {

  override name = 'Migration20261127024500';

  override up(): void | Promise<void> {
    this.addSql(`create table "metrics_customer_order_days" (
      "organization_id" uuid not null, "customer_id" uuid not null, "bucket" int not null, "product_id" uuid not null, "kind" smallint not null,
      "start_gap" int not null, "renew_gap_org" int not null, "renew_gap_product" int not null, "n" bigint not null, "net" bigint not null,
      constraint "metrics_customer_order_days_pkey" primary key (${KEY}));`);
    this.addSql(`create or replace function "metrics_order_facts_days_changed"() returns trigger language plpgsql as $$
      declare
        f "metrics_order_facts" := case when tg_op = 'DELETE' then old else new end;
        sign int := case when tg_op = 'DELETE' then -1 else 1 end;
      begin
        insert into "metrics_customer_order_days" as b values (${columns('f')}, sign, sign * f."net")
          on conflict (${KEY}) do update set "n" = b."n" + excluded."n", "net" = b."net" + excluded."net";
        if sign < 0 then
          delete from "metrics_customer_order_days" where "organization_id" = f."organization_id" and "customer_id" = f."customer_id"
            and "bucket" = ${day('f')} and "product_id" = f."product_id" and "n" = 0;
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger "metrics_order_facts_days" after insert or delete on "metrics_order_facts"
      for each row execute function "metrics_order_facts_days_changed"();`);
    this.addSql(`alter function "metrics_rebuild"() rename to "metrics_rebuild_without_days";`);
    this.addSql(`create function "metrics_rebuild"() returns void language plpgsql as $$
      begin
        alter table "metrics_order_facts" disable trigger "metrics_order_facts_days";
        perform "metrics_rebuild_without_days"();
        alter table "metrics_order_facts" enable trigger "metrics_order_facts_days";
        truncate "metrics_customer_order_days";
        insert into "metrics_customer_order_days"
          select ${columns('f')}, count(*), sum(f."net")
          from "metrics_order_facts" f
          group by 1, 2, 3, 4, 5, 6, 7, 8
          order by 1, 2, 3, 4, 5, 6, 7, 8;
      end $$;`);
    this.addSql(`insert into "metrics_customer_order_days"
      select ${columns('f')}, count(*), sum(f."net")
      from "metrics_order_facts" f
      group by 1, 2, 3, 4, 5, 6, 7, 8
      order by 1, 2, 3, 4, 5, 6, 7, 8;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function "metrics_rebuild"();`);
    this.addSql(`alter function "metrics_rebuild_without_days"() rename to "metrics_rebuild";`);
    this.addSql(`drop trigger "metrics_order_facts_days" on "metrics_order_facts";`);
    this.addSql(`drop function "metrics_order_facts_days_changed"();`);
    this.addSql(`drop table "metrics_customer_order_days";`);
  }

}
