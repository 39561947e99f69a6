import { Migration } from '@mikro-orm/migrations';

export class Migration20261125195900 extends Migration {

  override name = 'Migration20261125195900';

  // Meter rollups kept by a single ingest statement (api/src/modules/meters/rollups.ts): the
  // statement carries the meter definitions the API process has cached, and the guard takes the
  // organizations' rollup locks (shared) and checks, with a snapshot taken after the locks, that
  // those are still the definitions the rollups follow; otherwise the statement fails (P0R01) and
  // the process reloads them and retries.
  override up(): void | Promise<void> {
    this.addSql(`create or replace function "meter_rollups_fingerprint"(org uuid) returns text language sql stable as $$
      select coalesce(md5(string_agg(m."id"::text || '=' || m."rollup"::text, ',' order by m."id")), '')
      from "meters" m where m."organization_id" = org and m."rollup" is not null
    $$;`);
    this.addSql(`create or replace function "meter_rollups_guard"(orgs uuid[], fingerprints text[]) returns boolean language plpgsql volatile as $$
      declare
        o uuid;
        i int;
      begin
        for o in select distinct u from unnest(orgs) u order by 1 loop
          perform pg_advisory_xact_lock_shared(hashtextextended('meter-rollups:' || o::text, 0));
        end loop;
        for i in 1 .. coalesce(array_length(orgs, 1), 0) loop
          if "meter_rollups_fingerprint"(orgs[i]) is distinct from fingerprints[i] then
            raise exception 'meter rollups of organization % changed', orgs[i] using errcode = 'P0R01';
          end if;
        end loop;
        return true;
      end
    $$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function if exists "meter_rollups_guard"(uuid[], text[]);`);
    this.addSql(`drop function if exists "meter_rollups_fingerprint"(uuid);`);
  }

}
