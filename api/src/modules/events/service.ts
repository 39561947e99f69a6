/**
 * Event ingestion and reads. Ingestion is all-or-nothing and takes one round trip per batch,
 * whatever its size: the customer check and a COPY of the rows in one transaction; the meters'
 * rollups merge the batch after it commits (`meters/rollups.ts`). Reads are raw parameterized
 * SQL scoped to the caller's organizations; the customer embedded in each event is resolved by
 * `customer_id`, or else by the external id against the organization's live customers.
 */
import type { EntityManager } from '../../kit/db.ts';
import type { Metadata } from '../../kit/entity.ts';
import { RequestValidationError, type ValidationIssue } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import { visibleOrganizationIds } from '../organizations/scope.ts';
import type { EventSource } from './entities.ts';
import type { CustomerRow, EventCreate, EventRow } from './schemas.ts';
import { metadataQuerySql, runSql, SqlParams } from './sql.ts';
import { scheduleMerge } from '../meters/rollups.ts';
import { copyField, copyIn, literal } from './copy.ts';
import { timeOrderedId } from './ids.ts';

/** Who may ingest where, and the clock the batch is checked against. */
export interface IngestScope {
  /** The organization of an organization token (events must not name one), else null. */
  tokenOrganization: string | null;
  visible: string[];
  nowMs: number;
}

export async function ingestScope(em: EntityManager, principal: Principal, now: Date): Promise<IngestScope> {
  const tokenOrganization =
    principal.kind === 'organization'
      ? principal.organizationId
      : principal.kind === 'oauth2' && principal.subject.kind === 'organization'
        ? principal.subject.organizationId
        : null;
  const visible = tokenOrganization ? [tokenOrganization] : await visibleOrganizationIds(em, principal);
  return { tokenOrganization, visible, nowMs: now.getTime() };
}

/**
 * The per-event rules beyond the schema: pushes the issues of event `i`; returns its organization ('' when
 * that is not allowed). No closure and no Date per event: this runs for every event of every batch.
 */
export function checkEvent(e: EventCreate, i: number, scope: IngestScope, issues: ValidationIssue[]): string {
  let org: string | null = null;
  if (scope.tokenOrganization) {
    if (e.organization_id) {
      issues.push({
        type: 'value_error',
        loc: issueLoc(i, 'organization_id'),
        msg: 'Setting organization_id is disallowed when using an organization token.',
        input: e.organization_id,
      });
    } else org = scope.tokenOrganization;
  } else if (!e.organization_id) {
    issues.push({ type: 'missing', loc: issueLoc(i, 'organization_id'), msg: 'Field required' });
  } else if (!scope.visible.includes(e.organization_id)) {
    issues.push({ type: 'value_error', loc: issueLoc(i, 'organization_id'), msg: 'Organization not found.', input: e.organization_id });
  } else org = e.organization_id;
  if (e.timestamp && Date.parse(e.timestamp) > scope.nowMs) {
    issues.push({ type: 'value_error', loc: issueLoc(i, 'timestamp'), msg: 'Timestamp must be in the past.', input: e.timestamp });
  }
  return org ?? '';
}

/** Validates a batch for the caller and inserts it in one statement; returns the number inserted. */
export async function ingestEvents(em: EntityManager, principal: Principal, events: EventCreate[]): Promise<number> {
  const issues: ValidationIssue[] = [];
  const now = new Date();
  const scope = await ingestScope(em, principal, now);
  const orgs: string[] = [];
  for (let i = 0; i < events.length; i++) orgs.push(checkEvent(events[i]!, i, scope, issues));

  // Every customer_id must be a live customer of the event's organization: checked by the insert
  // statement itself (which then writes nothing), or here when the batch is refused anyway, so that
  // the answer lists every problem.
  if (issues.length) {
    const customerIds = [...new Set(events.map((e) => e.customer_id).filter((id): id is string => !!id))];
    const { rows } = await runSql<{ id: string; organization_id: string }>(
      em,
      'select "id", "organization_id" from "customers" where "id" = any($1::uuid[]) and "deleted_at" is null',
      [customerIds],
    );
    const owner = new Map(rows.map((r) => [r.id, r.organization_id]));
    events.forEach((e, i) => {
      if (e.customer_id && orgs[i] && owner.get(e.customer_id) !== orgs[i]) issues.push(unknownCustomer(i, e.customer_id));
    });
    throw new RequestValidationError(issues);
  }

  const { inserted, refused } = await writeEvents(
    em,
    events.map((e, i) => ({
      organizationId: orgs[i]!,
      name: e.name,
      timestamp: e.timestamp ?? now,
      customerId: e.customer_id ?? null,
      externalCustomerId: e.external_customer_id ?? null,
      metadata: e.metadata ?? {},
    })),
    'user',
    now,
    true,
  );
  if (refused.length) {
    throw new RequestValidationError(refused.map((i) => unknownCustomer(i, events[i]!.customer_id)));
  }
  return inserted;
}

const issueLoc = (i: number, field: string) => ['body', 'events', i, field];

const unknownCustomer = (i: number, input: unknown): ValidationIssue => ({
  type: 'value_error',
  loc: ['body', 'events', i, 'customer_id'],
  msg: 'Customer does not exist.',
  input,
});

export interface EventInsert {
  organizationId: string;
  name: string;
  timestamp: Date | string;
  customerId?: string | null;
  externalCustomerId?: string | null;
  metadata?: Metadata;
}

/**
 * Inserts already-validated events (other modules record their `system` events, e.g. meter
 * credits, through here); returns the number inserted.
 */
export async function insertEvents(
  em: EntityManager,
  rows: EventInsert[],
  source: EventSource = 'system',
  ingestedAt = new Date(),
): Promise<number> {
  return (await writeEvents(em, rows, source, ingestedAt, false)).inserted;
}

/** SQLSTATE raised by `events_check_customers` (the unknown customer ids in DETAIL). */
export const UNKNOWN_CUSTOMERS = 'P0R02';

export const EVENTS_COPY =
  'copy "events" ("id", "created_at", "timestamp", "name", "source", "organization_id", "customer_id", "external_customer_id", "metadata") from stdin';

/** One row of `EVENTS_COPY`'s text (the values validated; every text escaped). */
export const eventCopyLine = (
  created: string,
  timestamp: string,
  name: string,
  source: EventSource,
  organizationId: string,
  customerId: string | null,
  externalCustomerId: string | null,
  metadata: Metadata | undefined,
): string =>
  `${timeOrderedId()}\t${created}\t${copyField(timestamp)}\t${copyField(name)}\t${source}\t${organizationId}\t${customerId ?? '\\N'}\t${copyField(
    externalCustomerId,
  )}\t${copyField(JSON.stringify(metadata ?? {}))}\n`;

/** The `events_check_customers` call for a batch's (organization, customer_id) pairs, or '' when there are none. */
export function customerCheckSql(pairs: Iterable<[string, string]>): string {
  const list = [...pairs];
  if (!list.length) return '';
  const arr = (values: string[]) => literal(`{${values.join(',')}}`);
  return `select "events_check_customers"(${arr(list.map((p) => p[0]))}::uuid[], ${arr(list.map((p) => p[1]))}::uuid[]);`;
}

/**
 * Writes a batch; `refused` lists the indexes of events whose customer_id is not a live customer of
 * the event's organization (when `checkCustomers`), and then nothing is written.
 * - Outside a transaction: one simple-query message on a connection of its own, run by PostgreSQL
 *   as one transaction: `events_check_customers` over the batch's (organization, customer_id) pairs,
 *   then COPY of the rows (COPY text built here; the values are validated, every text escaped).
 * - Inside the caller's transaction: one INSERT … SELECT FROM json_to_recordset, with the same check.
 * Either way the organizations' rollup merges are scheduled (a merge that runs before the caller
 * commits leaves these events above its horizon, still counted by reads, for the next merge).
 */
async function writeEvents(
  em: EntityManager,
  rows: EventInsert[],
  source: EventSource,
  ingestedAt: Date,
  checkCustomers: boolean,
): Promise<{ inserted: number; refused: number[] }> {
  if (!rows.length) return { inserted: 0, refused: [] };
  const iso = (d: Date | string) => (d instanceof Date ? d.toISOString() : d);
  const orgIds = [...new Set(rows.map((r) => r.organizationId))];
  let inserted: number;
  if (!em.isInTransaction()) {
    const pairs = new Map<string, [string, string]>();
    if (checkCustomers) for (const r of rows) if (r.customerId) pairs.set(`${r.organizationId}:${r.customerId}`, [r.organizationId, r.customerId]);
    const check = customerCheckSql(pairs.values());
    const created = ingestedAt.toISOString();
    let data = '';
    for (const r of rows) data += eventCopyLine(created, iso(r.timestamp), r.name, source, r.organizationId, r.customerId ?? null, r.externalCustomerId ?? null, r.metadata);
    try {
      inserted = await copyIn(em, check, EVENTS_COPY, data);
    } catch (err) {
      const e = err as { code?: string; detail?: string };
      if (e.code !== UNKNOWN_CUSTOMERS) throw err;
      const unknown = new Set((e.detail ?? '').split(','));
      const refused: number[] = [];
      rows.forEach((r, i) => {
        if (r.customerId && unknown.has(r.customerId)) refused.push(i);
      });
      return { inserted: 0, refused };
    }
  } else {
    const params = new SqlParams();
    const batch = JSON.stringify(
      rows.map((r, i) => ({
        i,
        ts: iso(r.timestamp),
        name: r.name,
        org: r.organizationId,
        customer: r.customerId ?? null,
        external: r.externalCustomerId ?? null,
        metadata: r.metadata ?? {},
      })),
    );
    const bad = checkCustomers
      ? `select t.i from t where t.customer is not null and not exists (
           select 1 from "customers" c where c."id" = t.customer and c."organization_id" = t.org and c."deleted_at" is null)`
      : 'select null::int as i where false';
    const sql = `with t as materialized (
        select * from json_to_recordset(${params.add(batch, 'json')})
          as x(i int, ts timestamptz, name text, org uuid, customer uuid, external text, metadata jsonb)),
      bad as (${bad}),
      ins as (
        insert into "events" ("id", "created_at", "timestamp", "name", "source", "organization_id", "customer_id", "external_customer_id", "metadata")
        select gen_random_uuid(), ${params.add(ingestedAt.toISOString(), 'timestamptz')}, t.ts, t.name, ${params.add(source, 'text')},
          t.org, t.customer, t.external, coalesce(t.metadata, '{}'::jsonb)
        from t where not exists (select 1 from bad)
        returning 1)
      select (select count(*) from ins)::int as n, coalesce((select array_agg(b.i order by b.i) from bad b), '{}') as bad`;
    const { rows: result } = await runSql<{ n: number; bad: number[] }>(em, sql, params.values);
    if (result[0]?.bad.length) return { inserted: 0, refused: result[0].bad };
    inserted = Number(result[0]?.n ?? 0);
  }
  scheduleMerge(em, orgIds);
  return { inserted, refused: [] };
}

export interface EventQuery {
  organizationIds: string[];
  startTimestamp?: Date;
  endTimestamp?: Date;
  customerIds?: string[];
  externalCustomerIds?: string[];
  sources?: string[];
  names?: string[];
  metadata?: Record<string, string[]>;
  /** An extra condition on `e.*` (a compiled meter filter) whose values are already in `params`. */
  condition?: string;
  ids?: string[];
}

/**
 * WHERE conditions for events `e`. A customer filter matches events sent with that customer's id
 * and events sent with its external id; an external-id filter matches the other way round too.
 * The customers are resolved first (one small query), so the final conditions are plain
 * `= any(array)` comparisons the (organization, customer, timestamp) indexes serve.
 */
export async function eventConditions(em: EntityManager, q: EventQuery, params: SqlParams): Promise<string[]> {
  const where = [`e."organization_id" = any(${params.add(q.organizationIds, 'uuid[]')})`];
  if (q.ids) where.push(`e."id" = any(${params.add(q.ids, 'uuid[]')})`);
  if (q.startTimestamp) where.push(`e."timestamp" >= ${params.add(q.startTimestamp.toISOString(), 'timestamptz')}`);
  if (q.endTimestamp) where.push(`e."timestamp" <= ${params.add(q.endTimestamp.toISOString(), 'timestamptz')}`);
  if (q.customerIds) {
    // Events by customer id, or by the external id of one of these customers in its own organization.
    // Only ids of existing customers of these organizations are compared (the only ones an event can
    // carry), which also keeps meter rollups, whose customer_id has no foreign key, exact.
    const { rows } = await runSql<{ id: string; organization_id: string; external_id: string | null }>(
      em,
      `select "id", "organization_id", "external_id" from "customers"
       where "id" = any($1::uuid[]) and "organization_id" = any($2::uuid[])`,
      [q.customerIds, q.organizationIds],
    );
    const arms = [`e."customer_id" = any(${params.add(rows.map((r) => r.id), 'uuid[]')})`];
    const byOrg = new Map<string, string[]>();
    for (const r of rows) if (r.external_id) byOrg.set(r.organization_id, [...(byOrg.get(r.organization_id) ?? []), r.external_id]);
    for (const [org, externals] of byOrg) {
      arms.push(`(e."organization_id" = ${params.add(org, 'uuid')} and e."external_customer_id" = any(${params.add(externals, 'text[]')}))`);
    }
    where.push(arms.length > 1 ? `(${arms.join(' or ')})` : arms[0]!);
  }
  if (q.externalCustomerIds) {
    // Events by external id, or by the id of a live customer carrying one of these external ids.
    const { rows } = await runSql<{ id: string }>(
      em,
      `select "id" from "customers"
       where "external_id" = any($1::text[]) and "organization_id" = any($2::uuid[]) and "deleted_at" is null`,
      [q.externalCustomerIds, q.organizationIds],
    );
    const arms = [`e."external_customer_id" = any(${params.add(q.externalCustomerIds, 'text[]')})`];
    if (rows.length) arms.push(`e."customer_id" = any(${params.add(rows.map((r) => r.id), 'uuid[]')})`);
    where.push(arms.length > 1 ? `(${arms.join(' or ')})` : arms[0]!);
  }
  if (q.sources) where.push(`e."source" = any(${params.add(q.sources, 'text[]')})`);
  if (q.names) where.push(`e."name" = any(${params.add(q.names, 'text[]')})`);
  if (q.metadata) where.push(...metadataQuerySql('e."metadata"', q.metadata, params));
  if (q.condition) where.push(q.condition);
  return where;
}

const EVENT_COLUMNS = 'e."id", e."timestamp", e."name", e."source", e."organization_id", e."customer_id", e."external_customer_id", e."metadata"';

/** One page of events, newest first unless asked otherwise, with the total count. */
export async function listEvents(
  em: EntityManager,
  q: EventQuery,
  page: { limit: number; offset: number; ascending: boolean },
  params = new SqlParams(),
): Promise<{ rows: EventRow[]; total: number; customers: Map<string, CustomerRow> }> {
  const where = (await eventConditions(em, q, params)).join(' and ');
  const { rows: countRows } = await runSql<{ n: string }>(em, `select count(*) as n from "events" e where ${where}`, params.values);
  const total = Number(countRows[0]?.n ?? 0);
  const dir = page.ascending ? 'asc' : 'desc';
  const { rows } = total
    ? await runSql<EventRow>(
        em,
        `select ${EVENT_COLUMNS} from "events" e where ${where}
         order by e."timestamp" ${dir}, e."id" ${dir}
         limit ${params.add(page.limit, 'int')} offset ${params.add(page.offset, 'int')}`,
        params.values,
      )
    : { rows: [] as EventRow[] };
  return { rows, total, customers: await customersOf(em, rows) };
}

export async function getEvent(
  em: EntityManager,
  organizationIds: string[],
  id: string,
): Promise<{ row: EventRow; customer: CustomerRow | null } | null> {
  const params = new SqlParams();
  const where = (await eventConditions(em, { organizationIds, ids: [id] }, params)).join(' and ');
  const { rows } = await runSql<EventRow>(em, `select ${EVENT_COLUMNS} from "events" e where ${where}`, params.values);
  const row = rows[0];
  if (!row) return null;
  const customers = await customersOf(em, [row]);
  return { row, customer: customerFor(row, customers) };
}

const CUSTOMER_COLUMNS =
  'c."id", c."created_at", c."modified_at", c."metadata", c."external_id", c."email", c."email_verified", c."name", c."billing_address", c."tax_id", c."organization_id", c."deleted_at"';

/** The customers of a page of events, keyed by id and by `organization_id:external_id`. */
async function customersOf(em: EntityManager, rows: EventRow[]): Promise<Map<string, CustomerRow>> {
  const byId = new Map<string, CustomerRow>();
  const ids = [...new Set(rows.map((r) => r.customer_id).filter((v): v is string => !!v))];
  const external = rows.filter((r) => !r.customer_id && r.external_customer_id);
  if (!ids.length && !external.length) return byId;
  const params = new SqlParams();
  const { rows: customers } = await runSql<CustomerRow>(
    em,
    `select ${CUSTOMER_COLUMNS} from "customers" c
     where c."id" = any(${params.add(ids, 'uuid[]')})
        or (c."deleted_at" is null and (c."organization_id", c."external_id") in (
              select * from unnest(${params.add(external.map((r) => r.organization_id), 'uuid[]')}, ${params.add(
                external.map((r) => r.external_customer_id),
                'text[]',
              )})))`,
    params.values,
  );
  for (const c of customers) {
    byId.set(c.id, c);
    if (c.external_id && !c.deleted_at) byId.set(`${c.organization_id}:${c.external_id}`, c);
  }
  return byId;
}

export function customerFor(row: EventRow, customers: Map<string, CustomerRow>): CustomerRow | null {
  if (row.customer_id) return customers.get(row.customer_id) ?? null;
  if (row.external_customer_id) return customers.get(`${row.organization_id}:${row.external_customer_id}`) ?? null;
  return null;
}
