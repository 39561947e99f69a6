import { Migration } from '@mikro-orm/migrations';

/**
 * The rows of each organization's unfiltered orders, subscriptions and customers lists, counted beside
 * the rows ("list_counts"), so that a list asked without filters answers `pagination.total_count`
 * without counting every matched row. The count is the sum of the organization's shards for the
 * kind; it is exact in every snapshot, because the triggers change it in the writing transaction.
 *
 * Each writing transaction adds to one of `SHARDS` rows per (organization, kind), chosen by its own
 * transaction id, so that concurrent purchases of one organization mostly update different rows and
 * do not wait on one another's row lock until commit. A shard's `n` may be negative (a delete in a
 * transaction other than the insert's); only the sum means anything.
 *
 * Inserts and deletes (COPY and foreign-key cascades included) are counted per statement over the
 * transition table, one upsert per organization and statement; an update is counted only when it
 * moves a row into or out of the list (its organization, or for customers whether it is deleted).
 * TRUNCATE empties the kind's counts. Writes with `session_replication_role = replica` skip triggers:
 * `list_counts_rebuild()` counts again from the rows.
 */
const SHARDS = 16;

/** Table, list kind, which rows the unfiltered list shows (over the row alias `r`). */
const LISTS: [string, string, string][] = [
  ['orders', 'orders', 'true'],
  ['subscriptions', 'subscriptions', 'true'],
  ['customers', 'customers', 'r."deleted_at" is null'],
];

const shard = `(pg_current_xact_id()::text::bigint % ${SHARDS})::smallint`;

function upsert(kind: string, select: string): string {
  return `insert into "list_counts" ("organization_id", "kind", "shard", "n")
          ${select}
        on conflict ("organization_id", "kind", "shard") do update set "n" = "list_counts"."n" + excluded."n";`;
}

export class Migration20261127021500 extends Migration {

  override name = 'Migration20261127021500';

  override up(): void | Promise<void> {
    this.addSql(`create table "list_counts" (
      "organization_id" uuid not null,
      "kind" text not null,
      "shard" smallint not null,
      "n" bigint not null,
      primary key ("organization_id", "kind", "shard")
    ) with (fillfactor = 50);`);
    this.addSql(`create or replace function "list_counts_truncate"() returns trigger language plpgsql as $$
      begin
        delete from "list_counts" where "kind" = tg_argv[0];
        return null;
      end $$;`);
    for (const [table, kind, shown] of LISTS) {
      const rowShown = (rec: string) => shown.replace(/\br\./g, `${rec}.`);
      for (const [op, rows, sign] of [['insert', 'new_rows', ''], ['delete', 'old_rows', '-']] as const) {
        this.addSql(`create or replace function "list_counts_${table}_${op}"() returns trigger language plpgsql as $$
          begin
            ${upsert(kind, `select r."organization_id", '${kind}', ${shard}, ${sign}count(*) from ${rows} r where ${shown}
              group by r."organization_id" order by r."organization_id"`)}
            return null;
          end $$;`);
        this.addSql(`create trigger "list_counts_${op}" after ${op} on "${table}" referencing ${op === 'insert' ? 'new' : 'old'} table as ${rows}
          for each statement execute function "list_counts_${table}_${op}"();`);
      }
      const moved = [`old."organization_id" is distinct from new."organization_id"`];
      if (shown !== 'true') moved.push(`(${rowShown('old')}) is distinct from (${rowShown('new')})`);
      this.addSql(`create or replace function "list_counts_${table}_update"() returns trigger language plpgsql as $$
        begin
          if ${rowShown('old')} then
            ${upsert(kind, `values (old."organization_id", '${kind}', ${shard}, -1)`)}
          end if;
          if ${rowShown('new')} then
            ${upsert(kind, `values (new."organization_id", '${kind}', ${shard}, 1)`)}
          end if;
          return null;
        end $$;`);
      this.addSql(`create trigger "list_counts_update" after update on "${table}" for each row
        when (${moved.join(' or ')}) execute function "list_counts_${table}_update"();`);
      this.addSql(`create trigger "list_counts_truncate" after truncate on "${table}" for each statement execute function "list_counts_truncate"('${kind}');`);
    }
    this.addSql(`create or replace function "list_counts_rebuild"() returns void language plpgsql as $$
      begin
        lock table ${LISTS.map(([t]) => `"${t}"`).join(', ')} in share mode;
        delete from "list_counts";
        ${LISTS.map(([table, kind, shown]) => `insert into "list_counts" ("organization_id", "kind", "shard", "n")
          select r."organization_id", '${kind}', 0, count(*) from "${table}" r where ${shown} group by r."organization_id";`).join('\n        ')}
      end $$;`);
    this.addSql(`select "list_counts_rebuild"();`);
  }

  override down(): void | Promise<void> {
    for (const [table] of LISTS) {
      for (const op of ['insert', 'delete', 'update', 'truncate']) this.addSql(`drop trigger if exists "list_counts_${op}" on "${table}";`);
      for (const op of ['insert', 'delete', 'update']) this.addSql(`drop function if exists "list_counts_${table}_${op}"();`);
    }
    this.addSql(`drop function if exists "list_counts_truncate"();`);
    this.addSql(`drop function if exists "list_counts_rebuild"();`);
    this.addSql(`drop table if exists "list_counts";`);
  }

}
