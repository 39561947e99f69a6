/**
 * A product's read model built by PostgreSQL, for reads without the ORM (`kit/read-sql.ts`): the JSON
 * `serializeProduct` returns (live prices static first, benefits, media with their public URL,
 * attached custom fields, metadata, dates as `toISOString()`). Prices created in the same millisecond
 * (one request) keep the order they were stored in (`ctid`), as the ORM's collection returned them.
 *
 * The reads (products, and the product orders and subscriptions embed) take it stored:
 * `product_read_models`, which triggers refresh at the commit of every write that changes what it shows
 * (`storedProductJsonSql`, `withMediaUrls`). `productJsonSql` builds it live, for reads inside a write's
 * transaction, which see their own changes before the commit refreshes the stored copy.
 * `tests/reads/sql-json.test.ts` and `product-read-model.test.ts` compare both with the serializer on
 * the same rows; a change of the JSON changes `buildProductJsonSql` and comes with a migration that
 * replaces the stored copy's function `product_read_model_json` (Migration20261126021500).
 */
import type { Page } from '../../kit/pagination.ts';
import { splicedOne, splicedPage, type FragmentKind } from '../../kit/read-fragments.ts';
import { isoSql, sqlLiteral, type RawJson, type SqlReader } from '../../kit/read-sql.ts';
import { benefitJsonSql } from '../benefits/read-sql.ts';
import { mediaPublicUrlPrefix } from './media.ts';
import { productListSql, type ProductListFilters } from './service.ts';

/** `encodeURIComponent` of each `/`-separated segment of the text `expr` (storage `publicUrl`). */
function uriPathSql(expr: string): string {
  return `case when ${expr} ~ '^[A-Za-z0-9_.!~*''()/-]*$' then ${expr} else
    (select string_agg(case when ch ~ '^[A-Za-z0-9_.!~*''()/-]$' then ch
                            else upper(regexp_replace(encode(convert_to(ch, 'UTF8'), 'hex'), '(..)', '%\\1', 'g')) end, '' order by i)
       from unnest(string_to_array(${expr}, null)) with ordinality u(ch, i)) end`;
}

const SIZE_UNITS = ['', 'K', 'M', 'G', 'T', 'P', 'E'];
/** `sizeReadable` (files/schemas.ts): base-1024 steps with one decimal, "1.5 MB". */
function sizeReadableSql(expr: string): string {
  const steps = SIZE_UNITS.map((unit, k) => {
    const div = 1024n ** BigInt(k);
    const value = `round(${expr}::numeric / ${div}, 1)::text || ' ${unit}B'`;
    return k === SIZE_UNITS.length - 1 ? `else ${value}` : `when ${expr} < ${div * 1024n} then ${value}`;
  });
  return `case ${steps.join(' ')} end`;
}

/** `serializeProductMedia` of the file row `f`; its URL is the SQL text expression `urlPrefix` and the encoded path. */
function mediaJsonSql(f: string, urlPrefix: string): string {
  return `json_build_object('id', ${f}.id, 'organization_id', ${f}.organization_id, 'name', ${f}.name, 'path', ${f}.path,
    'mime_type', ${f}.mime_type, 'size', ${f}.size, 'storage_version', ${f}.storage_version, 'checksum_etag', ${f}.checksum_etag,
    'checksum_sha256_base64', ${f}.checksum_sha256base64, 'checksum_sha256_hex', ${f}.checksum_sha256hex,
    'last_modified_at', ${isoSql(`${f}.last_modified_at`)}, 'version', ${f}.version, 'is_uploaded', ${f}.is_uploaded,
    'created_at', ${isoSql(`${f}.created_at`)}, 'modified_at', ${isoSql(`${f}.modified_at`)}, 'size_readable', ${sizeReadableSql(`${f}.size`)},
    'service', ${f}.service, 'public_url', ${urlPrefix} || ${uriPathSql(`${f}.path`)})`;
}

/** `serializeCustomField` of the custom field row `cf` (properties without null values). */
function customFieldJsonSql(cf: string): string {
  return `json_build_object('id', ${cf}.id, 'created_at', ${isoSql(`${cf}.created_at`)}, 'modified_at', ${isoSql(`${cf}.modified_at`)},
    'metadata', ${cf}.metadata, 'type', ${cf}.type, 'slug', ${cf}.slug, 'name', ${cf}.name, 'organization_id', ${cf}.organization_id,
    'properties', (select coalesce(jsonb_object_agg(e.k, e.v), '{}'::jsonb) from jsonb_each(${cf}.properties) e(k, v) where e.v <> 'null'::jsonb))`;
}

/**
 * `serializePrice(price, product)` of the price row `pp` (any, archived too) of the product row `p`:
 * the product's prices, and the price orders and subscriptions embed.
 */
export function priceJsonSql(pp: string, p: string): string {
  const common = `'id', ${pp}.id, 'created_at', ${isoSql(`${pp}.created_at`)}, 'modified_at', ${isoSql(`${pp}.modified_at`)},
    'is_archived', ${pp}.is_archived, 'product_id', ${p}.id,
    'type', case when ${p}.recurring_interval is null then 'one_time' else 'recurring' end, 'recurring_interval', ${p}.recurring_interval,
    'amount_type', ${pp}.amount_type`;
  return `case ${pp}.amount_type
    when 'fixed' then json_build_object(${common}, 'price_currency', ${pp}.price_currency, 'price_amount', coalesce(${pp}.price_amount, 0))
    when 'custom' then json_build_object(${common}, 'price_currency', ${pp}.price_currency, 'minimum_amount', ${pp}.minimum_amount,
      'maximum_amount', ${pp}.maximum_amount, 'preset_amount', ${pp}.preset_amount)
    when 'metered_unit' then (select json_build_object(${common}, 'price_currency', ${pp}.price_currency,
      'unit_amount', trim_scale(coalesce(${pp}.unit_amount, 0))::text, 'cap_amount', ${pp}.cap_amount, 'meter_id', mt.id,
      'meter', json_build_object('id', mt.id, 'name', mt.name)) from meters mt where mt.id = ${pp}.meter_id)
    else json_build_object('id', ${pp}.id, 'created_at', ${isoSql(`${pp}.created_at`)}, 'modified_at', ${isoSql(`${pp}.modified_at`)},
      'is_archived', ${pp}.is_archived, 'product_id', ${p}.id,
      'type', case when ${p}.recurring_interval is null then 'one_time' else 'recurring' end, 'recurring_interval', ${p}.recurring_interval,
      'amount_type', 'free') end`;
}

/**
 * The JSON (type `json`) of the product whose id is the SQL expression `idExpr`, exactly as
 * `serializeProduct` builds it: a scalar subquery, so it can stand in any select list
 * (`select productJsonSql('o.product_id') from orders o`). Null when no such product. Scoping is the
 * caller's: filter the outer rows by organization first.
 */
export function productJsonSql(idExpr: string): string {
  const urlPrefix = mediaPublicUrlPrefix();
  const key = `${urlPrefix} ${idExpr}`;
  let sql = productSql.get(key);
  if (sql === undefined) productSql.set(key, (sql = buildProductJsonSql(idExpr, sqlLiteral(urlPrefix))));
  return sql;
}
/** The statements' text is the same for every request: built once per id expression. */
const productSql = new Map<string, string>();

/** The product JSON with the media URLs' prefix as the SQL text expression `urlPrefix`. */
export function buildProductJsonSql(idExpr: string, urlPrefix: string): string {
  return `(select json_build_object(
    'id', p.id, 'created_at', ${isoSql('p.created_at')}, 'modified_at', ${isoSql('p.modified_at')},
    'name', p.name, 'description', p.description, 'recurring_interval', p.recurring_interval,
    'trial_interval', case when p.trial_interval is not null and coalesce(p.trial_interval_count, 0) <> 0 then p.trial_interval end,
    'trial_interval_count', case when p.trial_interval is not null and coalesce(p.trial_interval_count, 0) <> 0 then p.trial_interval_count end,
    'is_recurring', p.recurring_interval is not null, 'is_archived', p.is_archived, 'organization_id', p.organization_id,
    'metadata', p.metadata,
    'prices', (select coalesce(json_agg(${priceJsonSql('pp', 'p')}
                 order by (pp.amount_type <> 'metered_unit') desc, pp.created_at asc, pp.ctid asc), '[]'::json)
               from product_prices pp where pp.product_id = p.id and pp.is_archived = false),
    'benefits', (select coalesce(json_agg(${benefitJsonSql('b')} order by pb."order" asc, pb.id asc), '[]'::json)
                 from product_benefits pb join benefits b on b.id = pb.benefit_id where pb.product_id = p.id),
    'medias', (select coalesce(json_agg(${mediaJsonSql('f', urlPrefix)} order by pm."order" asc, pm.id asc), '[]'::json)
               from product_medias pm join files f on f.id = pm.file_id where pm.product_id = p.id),
    'attached_custom_fields', (select coalesce(json_agg(json_build_object('custom_field_id', cf.id,
                                 'custom_field', ${customFieldJsonSql('cf')}, 'order', pcf."order", 'required', pcf.required)
                                 order by pcf."order" asc, pcf.id asc), '[]'::json)
               from product_custom_fields pcf join custom_fields cf on cf.id = pcf.custom_field_id where pcf.product_id = p.id)
  ) from products p where p.id = ${idExpr})`;
}

/**
 * The stored read model (`product_read_models`, kept by triggers at the commit of every write that
 * changes what it shows: Migration20261126021500) of the product whose id is `idExpr`: the JSON of
 * `buildProductJsonSql` with `PRODUCT_MODEL_URL_PREFIX` where a media URL's prefix goes, which the
 * statement's `withMediaUrls` replaces once over the whole body.
 */
export function storedProductJsonSql(idExpr: string): string {
  return `(select r.json from product_read_models r where r.product_id = ${idExpr})`;
}

/**
 * What the stored read model has in place of a media URL's prefix: the character U+0001, which JSON
 * text always escapes (`\u0001`), so `"public_url" : "\u0001` is found only where a URL starts.
 */
export const PRODUCT_MODEL_URL_PREFIX = 'chr(1)';
const MEDIA_URL_MARK = '"public_url" : "\\u0001';

let urlReplace: { prefix: string; sql: (textExpr: string) => string } | undefined;
/** The JSON text `textExpr` with the stored read models' media URL marks replaced by the storage's public URL. */
export function withMediaUrls(textExpr: string): string {
  const prefix = mediaPublicUrlPrefix();
  if (urlReplace?.prefix !== prefix) {
    const to = sqlLiteral(`"public_url" : "${JSON.stringify(prefix).slice(1, -1)}`);
    urlReplace = { prefix, sql: (t) => `replace(${t}, ${sqlLiteral(MEDIA_URL_MARK)}, ${to})` };
  }
  return urlReplace.sql(textExpr);
}

/**
 * A product's item in a list is its stored read model with the media URLs in place: its text depends
 * only on that row (and the configured URL prefix), so the row's version (`xmin`, new at every commit
 * that refreshes it) is the item's version. No stored row reads as `null`, as the full statement's.
 */
const productFragment: FragmentKind = {
  name: 'product',
  build: () => `select p.id::text as id, ${PRODUCT_VERSION} as v, coalesce(${withMediaUrls('r.json::text')}, 'null') as j
    from products p left join product_read_models r on r.product_id = p.id where p.id = any(?::uuid[])`,
  variant: mediaPublicUrlPrefix,
};
const PRODUCT_VERSION = `coalesce(r.xmin::text, '')`;
const productVersionSql = (idExpr: string) => `coalesce((select r.xmin::text from product_read_models r where r.product_id = ${idExpr}), '')`;

/**
 * `GET /v1/products/`: the filters, sorting and pagination of `listProductIds`, the body
 * `{"items": [...productJsonSql], "pagination": ...}` as JSON, its items kept by version (`splicedPage`).
 */
export function listProductsJson(em: SqlReader, f: ProductListFilters, sorting: string[], page: Page): Promise<RawJson> {
  const { from, where, params, sort } = productListSql(f, sorting);
  return splicedPage(
    em,
    {
      matched: `select p.id${sort.map((c, i) => `, ${c.expr} as s${i}`).join('')} from ${from} where ${where}`,
      params,
      orderBy: [...sort.map((c, i) => `m.s${i} ${c.dir}`), 'm.id asc'].join(', '),
      item: storedProductJsonSql,
      text: withMediaUrls,
      kind: productFragment,
      version: productVersionSql,
    },
    page,
  );
}

/**
 * `GET /v1/products/:id`: the product's JSON text if it belongs to one of `organizationIds`, else null
 * (404); kept by version as the list's items (the same kept text serves both).
 */
export function productJson(em: SqlReader, organizationIds: string[], id: string): Promise<RawJson | null> {
  if (!organizationIds.length) return Promise.resolve(null);
  return splicedOne(em, {
    table: 'products',
    where: `x.id = ? and x.organization_id in (${organizationIds.map(() => '?').join(', ')})`,
    params: [id, ...organizationIds],
    item: storedProductJsonSql,
    text: withMediaUrls,
    kind: productFragment,
    version: productVersionSql,
  });
}
