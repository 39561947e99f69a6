/**
 * A benefit's read model built by PostgreSQL: `benefitJsonSql` is the JSON `serializeBenefit` returns
 * (properties as each type's strategy shows them, write-only values hidden), for reads without the
 * ORM (`kit/read-sql.ts`). `tests/reads/sql-json.test.ts` compares both on the same rows.
 */
import { containsPattern } from '../../kit/db.ts';
import type { Page } from '../../kit/pagination.ts';
import { isoSql, sqlIn, type RawJson, type SqlReader } from '../../kit/read-sql.ts';
import { splicedOne, splicedPage, type FragmentKind } from '../../kit/read-fragments.ts';
import type { BenefitType } from './entities.ts';

/** `stored.x ?? null` of a jsonb column: JSON null when the key is missing. */
const prop = (bp: string, key: string) => `coalesce(${bp}->'${key}', 'null'::jsonb)`;
/** `stored.x ?? fallback`: a missing key or JSON null gives the fallback. */
const propOr = (bp: string, key: string, fallback: string) => `coalesce(nullif(${bp}->'${key}', 'null'::jsonb), '${fallback}'::jsonb)`;

/** Each type's `serializeProperties` (types/*.ts) over the stored properties `bp` (jsonb). */
const PROPERTIES_SQL: Record<BenefitType, (bp: string) => string> = {
  custom: (bp) => `json_build_object('note', ${prop(bp, 'note')})`,
  discord: (bp) => `json_build_object('guild_id', ${bp}->'guild_id', 'role_id', ${bp}->'role_id', 'guild_token', '')`,
  downloadables: (bp) =>
    `json_build_object('archived', ${propOr(bp, 'archived', '{}')}, 'files', ${propOr(bp, 'files', '[]')}, 'active_files',
      (select coalesce(jsonb_agg(f.v order by f.o), '[]'::jsonb)
         from jsonb_array_elements(${propOr(bp, 'files', '[]')}) with ordinality f(v, o)
        where coalesce(${propOr(bp, 'archived', '{}')}->(f.v #>> '{}'), 'false'::jsonb) in ('false'::jsonb, 'null'::jsonb, '0'::jsonb, '""'::jsonb)))`,
  github_repository: (bp) =>
    `json_build_object('repository_owner', ${bp}->'repository_owner', 'repository_name', ${bp}->'repository_name', 'permission', ${bp}->'permission')`,
  license_keys: (bp) =>
    `json_build_object('prefix', ${prop(bp, 'prefix')}, 'expires', ${prop(bp, 'expires')}, 'activations', ${prop(bp, 'activations')}, 'limit_usage', ${prop(bp, 'limit_usage')})`,
  meter_credit: (bp) => `json_build_object('units', ${bp}->'units', 'meter_id', ${bp}->'meter_id', 'rollover', ${bp}->'rollover')`,
};

/**
 * The JSON (type `json`) of the benefit row `b` (an alias of `benefits`), with the keys in
 * `serializeBenefit`'s order; `is_tax_applicable` only on custom benefits.
 */
export function benefitJsonSql(b: string): string {
  let sql = benefitSql.get(b);
  if (sql === undefined) benefitSql.set(b, (sql = buildBenefitJsonSql(b)));
  return sql;
}
/** The statements' text is the same for every request: built once per alias. */
const benefitSql = new Map<string, string>();

function buildBenefitJsonSql(b: string): string {
  const properties = `case ${b}.type ${Object.entries(PROPERTIES_SQL)
    .map(([type, sql]) => `when '${type}' then ${sql(`${b}.properties`)}`)
    .join(' ')} end`;
  const common = `'id', ${b}.id, 'created_at', ${isoSql(`${b}.created_at`)}, 'modified_at', ${isoSql(`${b}.modified_at`)},
    'type', ${b}.type, 'description', ${b}.description, 'selectable', ${b}.selectable, 'deletable', ${b}.deletable,
    'organization_id', ${b}.organization_id, 'properties', ${properties}`;
  return `case when ${b}.type = 'custom' then json_build_object(${common}, 'is_tax_applicable', ${b}.is_tax_applicable)
    else json_build_object(${common}) end`;
}

/** `benefitJsonSql` of the benefit whose id is `idExpr` (a scalar subquery). */
export function benefitByIdJsonSql(idExpr: string): string {
  return `(select ${benefitJsonSql('bj')} from benefits bj where bj.id = ${idExpr})`;
}

/** A benefit's JSON kept by its row version: it is built from its own row only. */
const benefitFragment: FragmentKind = {
  name: 'benefit',
  build: () => `select b.id::text as id, b.xmin::text as v, ${benefitJsonSql('b')}::text as j from benefits b where b.id = any(?::uuid[])`,
};
const benefitVersionSql = (idExpr: string) => `(select b.xmin::text from benefits b where b.id = ${idExpr})`;

const SORT_COLUMNS: Record<string, string> = { created_at: 'created_at', description: 'description' };

/**
 * `GET /v1/benefits/`: live benefits of `organizationIds`, optionally of the given types and with
 * `query` in the description, sorted by `sorting` then id, as the list body's JSON text, its items
 * kept by version (`splicedPage`).
 */
export function listBenefitsJson(
  em: SqlReader,
  f: { organizationIds: string[]; types?: BenefitType[]; query?: string },
  sorting: string[],
  page: Page,
): Promise<RawJson> {
  const params: unknown[] = [];
  const where = [sqlIn('b.organization_id', f.organizationIds, params), 'b.deleted_at is null'];
  if (f.types) where.push(sqlIn('b.type', f.types, params));
  if (f.query) {
    where.push('b.description ilike ?');
    params.push(containsPattern(f.query));
  }
  const sort = sorting.map((s) => ({ column: SORT_COLUMNS[s.replace(/^-/, '')]!, dir: s.startsWith('-') ? 'desc' : 'asc' }));
  return splicedPage(
    em,
    {
      matched: `select b.id, b.created_at, b.description from benefits b where ${where.join(' and ')}`,
      params,
      orderBy: [...sort.map((c) => `m.${c.column} ${c.dir}`), 'm.id asc'].join(', '),
      item: benefitByIdJsonSql,
      kind: benefitFragment,
      version: benefitVersionSql,
    },
    page,
  );
}

/** `GET /v1/benefits/:id`: the live benefit's JSON text if it belongs to one of `organizationIds`, else null (404). */
export function benefitJson(em: SqlReader, organizationIds: string[], id: string): Promise<RawJson | null> {
  const params: unknown[] = [id];
  return splicedOne(em, {
    table: 'benefits',
    where: `x.id = ? and x.deleted_at is null and ${sqlIn('x.organization_id', organizationIds, params)}`,
    params,
    item: (idExpr) => `(select ${benefitJsonSql('b')} from benefits b where b.id = ${idExpr})`,
    kind: benefitFragment,
    version: benefitVersionSql,
    rowVersion: (x) => `${x}.xmin::text`,
  });
}
