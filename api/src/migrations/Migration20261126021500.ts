import { Migration } from '@mikro-orm/migrations';

/**
 * The product read model: `product_read_models` holds each product's JSON as `products/read-sql.ts`
 * `buildProductJsonSql` builds it (the media URLs' prefix marked `PRODUCT_MODEL_URL_PREFIX`, which
 * the reads replace), so product, order and subscription reads embed stored JSON instead of building
 * it from six tables per product.
 *
 * Kept by deferred constraint triggers: at commit, each changed product, price, benefit link, benefit,
 * media link, file, custom field link, custom field or meter name refreshes the products that show it,
 * once per product and transaction (`refreshed_xid`). A refresh locks the product's read-model row
 * (never the product's row) and then builds the JSON in a statement of its own, so it sees every
 * transaction that committed before it got the lock: two writers of one product are applied in order.
 * The JSON function is a frozen copy of `buildProductJsonSql`: a change of the product JSON comes with
 * a migration replacing `product_read_model_json` (`tests/reads/product-read-model.test.ts` fails
 * until then).
 */
const JSON_SQL = `(select json_build_object(
    'id', p.id, 'created_at', to_char(p.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'modified_at', to_char(p.modified_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'name', p.name, 'description', p.description, 'recurring_interval', p.recurring_interval,
    'trial_interval', case when p.trial_interval is not null and coalesce(p.trial_interval_count, 0) <> 0 then p.trial_interval end,
    'trial_interval_count', case when p.trial_interval is not null and coalesce(p.trial_interval_count, 0) <> 0 then p.trial_interval_count end,
    'is_recurring', p.recurring_interval is not null, 'is_archived', p.is_archived, 'organization_id', p.organization_id,
    'metadata', p.metadata,
    'prices', (select coalesce(json_agg(case pp.amount_type
    when 'fixed' then json_build_object('id', pp.id, 'created_at', to_char(pp.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'modified_at', to_char(pp.modified_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'is_archived', pp.is_archived, 'product_id', p.id,
    'type', case when p.recurring_interval is null then 'one_time' else 'recurring' end, 'recurring_interval', p.recurring_interval,
    'amount_type', pp.amount_type, 'price_currency', pp.price_currency, 'price_amount', coalesce(pp.price_amount, 0))
    when 'custom' then json_build_object('id', pp.id, 'created_at', to_char(pp.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'modified_at', to_char(pp.modified_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'is_archived', pp.is_archived, 'product_id', p.id,
    'type', case when p.recurring_interval is null then 'one_time' else 'recurring' end, 'recurring_interval', p.recurring_interval,
    'amount_type', pp.amount_type, 'price_currency', pp.price_currency, 'minimum_amount', pp.minimum_amount,
      'maximum_amount', pp.maximum_amount, 'preset_amount', pp.preset_amount)
    when 'metered_unit' then (select json_build_object('id', pp.id, 'created_at', to_char(pp.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'modified_at', to_char(pp.modified_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'is_archived', pp.is_archived, 'product_id', p.id,
    'type', case when p.recurring_interval is null then 'one_time' else 'recurring' end, 'recurring_interval', p.recurring_interval,
    'amount_type', pp.amount_type, 'price_currency', pp.price_currency,
      'unit_amount', trim_scale(coalesce(pp.unit_amount, 0))::text, 'cap_amount', pp.cap_amount, 'meter_id', mt.id,
      'meter', json_build_object('id', mt.id, 'name', mt.name)) from meters mt where mt.id = pp.meter_id)
    else json_build_object('id', pp.id, 'created_at', to_char(pp.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'modified_at', to_char(pp.modified_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'is_archived', pp.is_archived, 'product_id', p.id,
      'type', case when p.recurring_interval is null then 'one_time' else 'recurring' end, 'recurring_interval', p.recurring_interval,
      'amount_type', 'free') end
                 order by (pp.amount_type <> 'metered_unit') desc, pp.created_at asc, pp.ctid asc), '[]'::json)
               from product_prices pp where pp.product_id = p.id and pp.is_archived = false),
    'benefits', (select coalesce(json_agg(case when b.type = 'custom' then json_build_object('id', b.id, 'created_at', to_char(b.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'modified_at', to_char(b.modified_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'type', b.type, 'description', b.description, 'selectable', b.selectable, 'deletable', b.deletable,
    'organization_id', b.organization_id, 'properties', case b.type when 'custom' then json_build_object('note', coalesce(b.properties->'note', 'null'::jsonb)) when 'discord' then json_build_object('guild_id', b.properties->'guild_id', 'role_id', b.properties->'role_id', 'guild_token', '') when 'downloadables' then json_build_object('archived', coalesce(nullif(b.properties->'archived', 'null'::jsonb), '{}'::jsonb), 'files', coalesce(nullif(b.properties->'files', 'null'::jsonb), '[]'::jsonb), 'active_files',
      (select coalesce(jsonb_agg(f.v order by f.o), '[]'::jsonb)
         from jsonb_array_elements(coalesce(nullif(b.properties->'files', 'null'::jsonb), '[]'::jsonb)) with ordinality f(v, o)
        where coalesce(coalesce(nullif(b.properties->'archived', 'null'::jsonb), '{}'::jsonb)->(f.v #>> '{}'), 'false'::jsonb) in ('false'::jsonb, 'null'::jsonb, '0'::jsonb, '""'::jsonb))) when 'github_repository' then json_build_object('repository_owner', b.properties->'repository_owner', 'repository_name', b.properties->'repository_name', 'permission', b.properties->'permission') when 'license_keys' then json_build_object('prefix', coalesce(b.properties->'prefix', 'null'::jsonb), 'expires', coalesce(b.properties->'expires', 'null'::jsonb), 'activations', coalesce(b.properties->'activations', 'null'::jsonb), 'limit_usage', coalesce(b.properties->'limit_usage', 'null'::jsonb)) when 'meter_credit' then json_build_object('units', b.properties->'units', 'meter_id', b.properties->'meter_id', 'rollover', b.properties->'rollover') end, 'is_tax_applicable', b.is_tax_applicable)
    else json_build_object('id', b.id, 'created_at', to_char(b.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'modified_at', to_char(b.modified_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'type', b.type, 'description', b.description, 'selectable', b.selectable, 'deletable', b.deletable,
    'organization_id', b.organization_id, 'properties', case b.type when 'custom' then json_build_object('note', coalesce(b.properties->'note', 'null'::jsonb)) when 'discord' then json_build_object('guild_id', b.properties->'guild_id', 'role_id', b.properties->'role_id', 'guild_token', '') when 'downloadables' then json_build_object('archived', coalesce(nullif(b.properties->'archived', 'null'::jsonb), '{}'::jsonb), 'files', coalesce(nullif(b.properties->'files', 'null'::jsonb), '[]'::jsonb), 'active_files',
      (select coalesce(jsonb_agg(f.v order by f.o), '[]'::jsonb)
         from jsonb_array_elements(coalesce(nullif(b.properties->'files', 'null'::jsonb), '[]'::jsonb)) with ordinality f(v, o)
        where coalesce(coalesce(nullif(b.properties->'archived', 'null'::jsonb), '{}'::jsonb)->(f.v #>> '{}'), 'false'::jsonb) in ('false'::jsonb, 'null'::jsonb, '0'::jsonb, '""'::jsonb))) when 'github_repository' then json_build_object('repository_owner', b.properties->'repository_owner', 'repository_name', b.properties->'repository_name', 'permission', b.properties->'permission') when 'license_keys' then json_build_object('prefix', coalesce(b.properties->'prefix', 'null'::jsonb), 'expires', coalesce(b.properties->'expires', 'null'::jsonb), 'activations', coalesce(b.properties->'activations', 'null'::jsonb), 'limit_usage', coalesce(b.properties->'limit_usage', 'null'::jsonb)) when 'meter_credit' then json_build_object('units', b.properties->'units', 'meter_id', b.properties->'meter_id', 'rollover', b.properties->'rollover') end) end order by pb."order" asc, pb.id asc), '[]'::json)
                 from product_benefits pb join benefits b on b.id = pb.benefit_id where pb.product_id = p.id),
    'medias', (select coalesce(json_agg(json_build_object('id', f.id, 'organization_id', f.organization_id, 'name', f.name, 'path', f.path,
    'mime_type', f.mime_type, 'size', f.size, 'storage_version', f.storage_version, 'checksum_etag', f.checksum_etag,
    'checksum_sha256_base64', f.checksum_sha256base64, 'checksum_sha256_hex', f.checksum_sha256hex,
    'last_modified_at', to_char(f.last_modified_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'version', f.version, 'is_uploaded', f.is_uploaded,
    'created_at', to_char(f.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'modified_at', to_char(f.modified_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'size_readable', case when f.size < 1024 then round(f.size::numeric / 1, 1)::text || ' B' when f.size < 1048576 then round(f.size::numeric / 1024, 1)::text || ' KB' when f.size < 1073741824 then round(f.size::numeric / 1048576, 1)::text || ' MB' when f.size < 1099511627776 then round(f.size::numeric / 1073741824, 1)::text || ' GB' when f.size < 1125899906842624 then round(f.size::numeric / 1099511627776, 1)::text || ' TB' when f.size < 1152921504606846976 then round(f.size::numeric / 1125899906842624, 1)::text || ' PB' else round(f.size::numeric / 1152921504606846976, 1)::text || ' EB' end,
    'service', f.service, 'public_url', chr(1) || case when f.path ~ '^[A-Za-z0-9_.!~*''()/-]*$' then f.path else
    (select string_agg(case when ch ~ '^[A-Za-z0-9_.!~*''()/-]$' then ch
                            else upper(regexp_replace(encode(convert_to(ch, 'UTF8'), 'hex'), '(..)', '%\\1', 'g')) end, '' order by i)
       from unnest(string_to_array(f.path, null)) with ordinality u(ch, i)) end) order by pm."order" asc, pm.id asc), '[]'::json)
               from product_medias pm join files f on f.id = pm.file_id where pm.product_id = p.id),
    'attached_custom_fields', (select coalesce(json_agg(json_build_object('custom_field_id', cf.id,
                                 'custom_field', json_build_object('id', cf.id, 'created_at', to_char(cf.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'modified_at', to_char(cf.modified_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'metadata', cf.metadata, 'type', cf.type, 'slug', cf.slug, 'name', cf.name, 'organization_id', cf.organization_id,
    'properties', (select coalesce(jsonb_object_agg(e.k, e.v), '{}'::jsonb) from jsonb_each(cf.properties) e(k, v) where e.v <> 'null'::jsonb)), 'order', pcf."order", 'required', pcf.required)
                                 order by pcf."order" asc, pcf.id asc), '[]'::json)
               from product_custom_fields pcf join custom_fields cf on cf.id = pcf.custom_field_id where pcf.product_id = p.id)
  ) from products p where p.id = pid)`;

/** [table, trigger suffix, events, when, function, args] */
const TRIGGERS: [string, string, string, string, string, string][] = [
  ['products', 'insert', 'insert', '', 'product_read_model_rows_changed', `'id'`],
  ['products', 'update', 'update', 'old.* is distinct from new.*', 'product_read_model_rows_changed', `'id'`],
  ['product_prices', 'change', 'insert or update or delete', '', 'product_read_model_rows_changed', `'product_id'`],
  ['product_benefits', 'change', 'insert or update or delete', '', 'product_read_model_rows_changed', `'product_id'`],
  ['product_medias', 'change', 'insert or update or delete', '', 'product_read_model_rows_changed', `'product_id'`],
  ['product_custom_fields', 'change', 'insert or update or delete', '', 'product_read_model_rows_changed', `'product_id'`],
  ['benefits', 'update', 'update', 'old.* is distinct from new.*', 'product_read_model_linked_changed', `'product_benefits', 'benefit_id'`],
  ['files', 'update', 'update', 'old.* is distinct from new.*', 'product_read_model_linked_changed', `'product_medias', 'file_id'`],
  ['custom_fields', 'update', 'update', 'old.* is distinct from new.*', 'product_read_model_linked_changed', `'product_custom_fields', 'custom_field_id'`],
  ['meters', 'update', 'update of "name"', 'old."name" is distinct from new."name"', 'product_read_model_linked_changed', `'product_prices', 'meter_id'`],
];

export class Migration20261126021500 extends Migration {
  override name = 'Migration20261126021500';

  override async up(): Promise<void> {
    this.addSql(`create table "product_read_models" (
      "product_id" uuid not null references "products" ("id") on delete cascade,
      "refreshed_xid" xid8 not null,
      "json" json not null,
      constraint "product_read_models_pkey" primary key ("product_id")
    ) with (toast_tuple_target = 8160);`);
    // A product's JSON (a few KB) stays in the row, uncompressed, up to 8 KB: a page reads it without TOAST.
    this.addSql(`alter table "product_read_models" alter column "json" set storage main;`);
    this.addSql(`create or replace function "product_read_model_json"(pid uuid) returns json language sql stable as $$ select ${JSON_SQL} $$;`);
    this.addSql(`create or replace function "product_read_model_refresh"(pid uuid) returns void language plpgsql as $$
      begin
        if pid is null or exists (select 1 from "product_read_models" r
                                   where r."product_id" = pid and r."refreshed_xid" = pg_current_xact_id()) then
          return;
        end if;
        if not exists (select 1 from "products" p where p."id" = pid) then
          return;
        end if;
        insert into "product_read_models" ("product_id", "refreshed_xid", "json") values (pid, '0', 'null')
          on conflict ("product_id") do nothing;
        perform 1 from "product_read_models" r where r."product_id" = pid for update;
        update "product_read_models" set "json" = "product_read_model_json"(pid), "refreshed_xid" = pg_current_xact_id()
          where "product_id" = pid;
      end $$;`);
    // Rows that carry the product's id in the column tg_argv[0] (the product itself: "id").
    this.addSql(`create or replace function "product_read_model_rows_changed"() returns trigger language plpgsql as $$
      declare
        a uuid;
        b uuid;
      begin
        if tg_op <> 'INSERT' then a := (to_jsonb(old) ->> tg_argv[0])::uuid; end if;
        if tg_op <> 'DELETE' then b := (to_jsonb(new) ->> tg_argv[0])::uuid; end if;
        if a is not null and b is not null and b < a then
          perform "product_read_model_refresh"(b);
          perform "product_read_model_refresh"(a);
        else
          perform "product_read_model_refresh"(a);
          perform "product_read_model_refresh"(b);
        end if;
        return null;
      end $$;`);
    // Rows products show through a link table tg_argv[0] whose column tg_argv[1] references them.
    this.addSql(`create or replace function "product_read_model_linked_changed"() returns trigger language plpgsql as $$
      declare
        r record;
      begin
        for r in execute format('select distinct l."product_id" from %I l where l.%I = $1 order by 1', tg_argv[0], tg_argv[1])
                 using new."id" loop
          perform "product_read_model_refresh"(r."product_id");
        end loop;
        return null;
      end $$;`);
    this.addSql(`insert into "product_read_models" ("product_id", "refreshed_xid", "json")
      select p."id", '0', "product_read_model_json"(p."id") from "products" p;`);
    for (const [table, suffix, events, when, fn, args] of TRIGGERS) {
      this.addSql(`create constraint trigger "${table}_product_read_model_${suffix}" after ${events} on "${table}"
        deferrable initially deferred for each row${when ? ` when (${when})` : ''} execute function "${fn}"(${args});`);
    }
  }

  override async down(): Promise<void> {
    for (const [table, suffix] of TRIGGERS) this.addSql(`drop trigger if exists "${table}_product_read_model_${suffix}" on "${table}";`);
    this.addSql(`drop function if exists "product_read_model_linked_changed"();`);
    this.addSql(`drop function if exists "product_read_model_rows_changed"();`);
    this.addSql(`drop function if exists "product_read_model_refresh"(uuid);`);
    this.addSql(`drop function if exists "product_read_model_json"(uuid);`);
    this.addSql(`drop table if exists "product_read_models";`);
  }
}
