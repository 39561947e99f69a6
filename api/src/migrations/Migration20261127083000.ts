import { Migration } from '@mikro-orm/migrations';

/**
 * The list counters (`list_counts`, Migration20261127021500) without waits between writers, and
 * without rows left behind by a deleted organization.
 *
 * Before, a transaction added to the counter shard named by its own transaction id, and held that row
 * locked until commit. Two transactions of one organization on the same shard that wrote two lists in
 * opposite orders (a customer then an order, an order then a customer) waited for each other, and
 * PostgreSQL ended one of them as a deadlock. Now a transaction adds to a shard of (organization, kind)
 * that no other open transaction holds (`for update skip locked`), and adds a new shard only when
 * every existing one is held: a writer does not wait on a counter, so it does not deadlock on one.
 * The shards of (organization, kind) stay about as many as its writers at once.
 *
 * Deleting an organization deletes its counters when the transaction commits, after the cascades that
 * counted its rows out.
 */
const SHARDS = 16;

const LISTS: [string, string, string][] = [
  ['orders', 'orders', 'true'],
  ['subscriptions', 'subscriptions', 'true'],
  ['customers', 'customers', 'r."deleted_at" is null'],
];

export class Migration20261127083000 extends Migration {

  override name = 'Migration20261127083000';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function "list_counts_add"(o uuid, k text, d bigint) returns void language plpgsql as $$
      declare
        s smallint := (pg_current_xact_id()::text::bigint % 32767)::smallint;
      begin
        if d = 0 then return; end if;
        update "list_counts" lc set "n" = lc."n" + d
          where lc."organization_id" = o and lc."kind" = k and lc."shard" = (
            select f."shard" from "list_counts" f where f."organization_id" = o and f."kind" = k
              order by f."shard" limit 1 for update skip locked);
        if found then return; end if;
        -- Every shard is another open transaction's: a new one, numbered by this transaction's id (no
        -- other open transaction's id is equal modulo 32767), else at random.
        loop
          if not exists (select from "list_counts" f where f."organization_id" = o and f."kind" = k and f."shard" = s) then
            insert into "list_counts" ("organization_id", "kind", "shard", "n") values (o, k, s, d) on conflict do nothing;
            exit when found;
          end if;
          s := floor(random() * 32767)::smallint;
        end loop;
      end $$;`);
    for (const [table, kind, shown] of LISTS) {
      const rowShown = (rec: string) => shown.replace(/\br\./g, `${rec}.`);
      for (const [op, rows, sign] of [['insert', 'new_rows', ''], ['delete', 'old_rows', '-']] as const) {
        this.addSql(`create or replace function "list_counts_${table}_${op}"() returns trigger language plpgsql as $$
          declare c record;
          begin
            for c in select r."organization_id" as o, count(*) as n from ${rows} r where ${shown}
                group by r."organization_id" order by r."organization_id" loop
              perform "list_counts_add"(c.o, '${kind}', ${sign}c.n);
            end loop;
            return null;
          end $$;`);
      }
      this.addSql(`create or replace function "list_counts_${table}_update"() returns trigger language plpgsql as $$
        begin
          if ${rowShown('old')} then perform "list_counts_add"(old."organization_id", '${kind}', -1); end if;
          if ${rowShown('new')} then perform "list_counts_add"(new."organization_id", '${kind}', 1); end if;
          return null;
        end $$;`);
    }
    // At commit: the foreign keys' cascades count the organization's rows out after the statement's
    // own triggers have run, so a trigger of the delete statement would be followed by new counter rows.
    this.addSql(`create or replace function "list_counts_organizations_delete"() returns trigger language plpgsql as $$
      begin
        delete from "list_counts" where "organization_id" = old."id";
        return null;
      end $$;`);
    this.addSql(`create constraint trigger "list_counts_delete" after delete on "organizations" deferrable initially deferred
      for each row execute function "list_counts_organizations_delete"();`);
    this.addSql(`delete from "list_counts" lc where not exists (select from "organizations" o where o."id" = lc."organization_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "list_counts_delete" on "organizations";`);
    this.addSql(`drop function if exists "list_counts_organizations_delete"();`);
    for (const [table, kind, shown] of LISTS) {
      const rowShown = (rec: string) => shown.replace(/\br\./g, `${rec}.`);
      const upsert = (select: string) => `insert into "list_counts" ("organization_id", "kind", "shard", "n") ${select}
        on conflict ("organization_id", "kind", "shard") do update set "n" = "list_counts"."n" + excluded."n";`;
      const shard = `(pg_current_xact_id()::text::bigint % ${SHARDS})::smallint`;
      for (const [op, rows, sign] of [['insert', 'new_rows', ''], ['delete', 'old_rows', '-']] as const) {
        this.addSql(`create or replace function "list_counts_${table}_${op}"() returns trigger language plpgsql as $$
          begin
            ${upsert(`select r."organization_id", '${kind}', ${shard}, ${sign}count(*) from ${rows} r where ${shown}
              group by r."organization_id" order by r."organization_id"`)}
            return null;
          end $$;`);
      }
      this.addSql(`create or replace function "list_counts_${table}_update"() returns trigger language plpgsql as $$
        begin
          if ${rowShown('old')} then ${upsert(`values (old."organization_id", '${kind}', ${shard}, -1)`)} end if;
          if ${rowShown('new')} then ${upsert(`values (new."organization_id", '${kind}', ${shard}, 1)`)} end if;
          return null;
        end $$;`);
    }
    this.addSql(`drop function if exists "list_counts_add"(uuid, text, bigint);`);
  }

}
