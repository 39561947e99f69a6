/** Customer rules. Services never commit on their own: the caller's transaction does. */
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import { ResourceNotFound, fieldError } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import type { Deps } from '../../deps.ts';
import { queueBenefitRequestsDurably } from '../benefits/lifecycle.ts';
import { Organization } from '../organizations/entities.ts';
import { visibleOrganizationIds } from '../organizations/scope.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { Customer } from './entities.ts';
import { BenefitGrant } from '../benefits/grants.ts';
import { databaseNow, meteredPrices, quoteUsage } from '../usage/service.ts';
import { Subscription } from '../subscriptions/entities.ts';
import { serializeStateSubscription } from '../subscriptions/schemas.ts';
import { serializeCustomer, type CustomerCreate, type CustomerUpdate } from './schemas.ts';
import { customerJsonSql } from './read-sql.ts';
import { isoSql } from '../../kit/read-sql.ts';

const EMAIL_TAKEN = 'A customer with this email address already exists.';
const EXTERNAL_ID_TAKEN = 'A customer with this external ID already exists.';

export type CustomerLookup = { id: string } | { externalId: string };

/** A live customer the principal can see; 404 otherwise. */
export async function getVisibleCustomer(em: EntityManager, principal: Principal, by: CustomerLookup): Promise<Customer> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const key = 'id' in by ? { id: by.id } : { externalId: by.externalId };
  const customer = await em.findOne(
    Customer,
    { ...key, organization: { $in: orgIds }, deletedAt: null },
    { orderBy: { createdAt: 'asc' } },
  );
  if (!customer) throw ResourceNotFound('Customer not found');
  return customer;
}

async function assertFree(em: EntityManager, organizationId: string, field: 'email' | 'externalId', value: string, exceptId?: string) {
  const taken = await em.count(Customer, {
    organization: organizationId,
    deletedAt: null,
    [field]: value,
    ...(exceptId ? { id: { $ne: exceptId } } : {}),
  });
  if (taken) {
    throw field === 'email'
      ? fieldError(['body', 'email'], EMAIL_TAKEN, 'value_error', value)
      : fieldError(['body', 'external_id'], EXTERNAL_ID_TAKEN, 'value_error', value);
  }
}

/** Flushes; a race on the live unique indexes becomes the same 422 as the pre-checks. */
export async function flushCustomer(em: EntityManager, input: { email?: string | null; external_id?: string | null }) {
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) {
      const msg = String(err.message);
      if (msg.includes('customers_organization_email_live_unique')) {
        throw fieldError(['body', 'email'], EMAIL_TAKEN, 'value_error', input.email);
      }
      if (msg.includes('customers_organization_external_id_live_unique')) {
        throw fieldError(['body', 'external_id'], EXTERNAL_ID_TAKEN, 'value_error', input.external_id);
      }
    }
    throw err;
  }
}

export async function createCustomer(em: EntityManager, organizationId: string, input: CustomerCreate): Promise<Customer> {
  await assertFree(em, organizationId, 'email', input.email);
  if (input.external_id) await assertFree(em, organizationId, 'externalId', input.external_id);
  const c = em.create(Customer, {
    organization: em.getReference(Organization, organizationId),
    email: input.email,
    emailVerified: false,
    name: input.name ?? null,
    externalId: input.external_id ?? null,
    billingAddress: input.billing_address ?? null,
    taxId: input.tax_id ?? null,
    metadata: input.metadata ?? {},
    userId: null,
    deletedAt: null,
  });
  return c;
}

export async function updateCustomer(em: EntityManager, c: Customer, input: CustomerUpdate): Promise<void> {
  const organizationId = c.organization.id;
  if (input.email && input.email !== c.email) {
    await assertFree(em, organizationId, 'email', input.email, c.id);
    c.email = input.email;
    c.emailVerified = false;
  }
  if (input.external_id && input.external_id !== c.externalId) {
    await assertFree(em, organizationId, 'externalId', input.external_id, c.id);
  }
  if (input.external_id !== undefined) c.externalId = input.external_id;
  if (input.name !== undefined) c.name = input.name;
  if (input.billing_address !== undefined) c.billingAddress = input.billing_address;
  if (input.tax_id !== undefined) c.taxId = input.tax_id;
  if (input.metadata != null) c.metadata = input.metadata;
}

/** Soft delete: the email and external id become free again; the row stays for orders and history. */
export function deleteCustomer(c: Customer): void {
  c.deletedAt = new Date();
}

/** Creates the customer with its `customer.created` event, in the caller's transaction. */
export async function createCustomerWithEvent(tx: EntityManager, organizationId: string, input: CustomerCreate): Promise<Customer> {
  const c = await createCustomer(tx, organizationId, input);
  await flushCustomer(tx, input);
  emitCustomerEvent(tx, c, 'created');
  return c;
}

/** Changes a visible customer with its `customer.updated` event; the flush sets modified_at for the event. */
export async function updateVisibleCustomer(tx: EntityManager, principal: Principal, by: CustomerLookup, input: CustomerUpdate): Promise<Customer> {
  const c = await getVisibleCustomer(tx, principal, by);
  await updateCustomer(tx, c, input);
  await flushCustomer(tx, input);
  emitCustomerEvent(tx, c, 'updated');
  return c;
}

/** Soft-deletes a visible customer with its `customer.deleted` event; their grants are revoked in the background after commit. */
export async function deleteVisibleCustomer(
  tx: EntityManager,
  afterCommit: (fn: () => Promise<unknown>) => void,
  deps: Deps,
  principal: Principal,
  by: CustomerLookup,
): Promise<void> {
  const c = await getVisibleCustomer(tx, principal, by);
  deleteCustomer(c);
  await tx.flush();
  emitCustomerEvent(tx, c, 'deleted');
  queueBenefitRequestsDurably(tx, afterCommit, deps, { kind: 'customer-deleted', customerId: c.id }, c.organization.id);
}

/** Emits `customer.<kind>` with the read model, in the caller's unit of work. */
export function emitCustomerEvent(em: EntityManager, c: Customer, kind: 'created' | 'updated' | 'deleted') {
  emitEvent(em, c.organization.id, `customer.${kind}`, serializeCustomer(c));
}

export interface CustomerStateParts {
  /** Subscription read models (status must be `active` for the SDK). */
  active_subscriptions: Record<string, unknown>[];
  /** `{id, created_at, modified_at, granted_at, benefit_id, benefit_type, properties}` per granted benefit. */
  granted_benefits: Record<string, unknown>[];
  /**
   * Per meter of the active subscriptions' metered prices: the current period's usage not billed yet
   * (`consumed_units`), the units ever credited by meter_credit benefits, and `balance` = credits left
   * − consumed (negative: units that will be billed). docs/billing.md.
   */
  active_meters: Record<string, unknown>[];
}

/**
 * What the customer currently has: active subscriptions (status `active`, the only one the SDK's
 * customer state accepts) and granted, unrevoked benefit grants of live benefits. The one hook the
 * state routes (and `customer.state_changed`) read from.
 */
export async function customerState(em: EntityManager, customer: Customer): Promise<CustomerStateParts> {
  const [subscriptions, grants] = await Promise.all([
    em.find(
      Subscription,
      { customer: customer.id, status: 'active' },
      { populate: ['product', 'price', 'discount'], orderBy: [{ startedAt: 'asc' }, { id: 'asc' }] },
    ),
    em.find(
      BenefitGrant,
      { customer: customer.id, grantedAt: { $ne: null }, revokedAt: null, benefit: { deletedAt: null } },
      { populate: ['benefit'], orderBy: [{ grantedAt: 'asc' }, { id: 'asc' }] },
    ),
  ]);
  const activeMeters: Record<string, unknown>[] = [];
  if (subscriptions.length) {
    await em.populate(subscriptions, ['product.prices.meter'], { refresh: false });
    const metered = subscriptions.filter((x) => x.currentPeriodEnd && meteredPrices(x).length);
    const now = metered.length ? await databaseNow(em) : new Date();
    for (const sub of metered) {
      if (!sub.currentPeriodEnd) continue;
      for (const q of await quoteUsage(em, sub, { periodStart: sub.currentPeriodStart, periodEnd: sub.currentPeriodEnd, billedThrough: now })) {
        activeMeters.push({
          id: q.meter.id,
          created_at: sub.currentPeriodStart.toISOString(),
          modified_at: null,
          meter_id: q.meter.id,
          meter: { id: q.meter.id, name: q.meter.name },
          subscription_id: sub.id,
          period_start: sub.currentPeriodStart.toISOString(),
          period_end: sub.currentPeriodEnd.toISOString(),
          consumed_units: Number(q.line.usage),
          credited_units: Number(q.credited),
          balance: Number(q.creditBalance) - Number(q.line.usage),
        });
      }
    }
  }
  return {
    active_meters: activeMeters,
    active_subscriptions: subscriptions.map(serializeStateSubscription),
    granted_benefits: grants.map((g) => ({
      id: g.id,
      created_at: g.createdAt.toISOString(),
      modified_at: g.modifiedAt?.toISOString() ?? null,
      granted_at: g.grantedAt!.toISOString(),
      benefit_id: g.benefit.id,
      benefit_type: g.benefit.type,
      properties: g.properties,
    })),
  };
}

/**
 * Writes `customer.state_changed` with the customer's state as of now, inside the caller's transaction.
 * The customer row is locked first: changes to one customer's grants and subscriptions run in
 * concurrent transactions (one workflow per benefit), and without the lock two of them could each
 * miss the other's uncommitted change, so that no event ever shows the final state. With it, the
 * later transaction waits and then reads (READ COMMITTED) what the earlier one committed.
 * `FOR NO KEY UPDATE`, not `FOR UPDATE`: the transactions have usually inserted a grant already, whose
 * foreign key holds a KEY SHARE lock on this row, which `FOR UPDATE` would wait on (a deadlock between
 * two of them); NO KEY UPDATE serializes them with each other and ignores those KEY SHARE locks.
 */
export async function emitCustomerStateChanged(tx: EntityManager, organizationId: string, customer: Customer): Promise<void> {
  await tx.execute(`select 1 from "customers" where "id" = ? for no key update`, [customer.id]);
  emitEvent(tx, organizationId, 'customer.state_changed', { ...serializeCustomer(customer), ...(await customerState(tx, customer)) });
}

/** Off: `GET …/state` always takes the ORM path (the equivalence test compares both). */
let stateSql = true;
export function setCustomerStateSql(on: boolean): void {
  stateSql = on;
}

/**
 * `GET /v1/customers/{id}/state` (or by external id) for a visible customer: with no active
 * subscription, one statement answers the customer's read model (`customerJsonSql`) and its granted
 * benefits, the JSON `customerState` builds; with one (their meters need the usage quotes), the ORM
 * path. 404 when the customer is not visible. tests/checkouts/customer-state-sql.test.ts compares both.
 */
export async function visibleCustomerState(em: EntityManager, principal: Principal, by: CustomerLookup): Promise<Record<string, unknown>> {
  if (stateSql) {
    const orgIds = await visibleOrganizationIds(em, principal);
    if (!orgIds.length) throw ResourceNotFound('Customer not found');
    const [r] = await em.execute<{ customer: Record<string, unknown>; subscribed: boolean; grants: Record<string, unknown>[] }[]>(
      `select ${customerJsonSql('c')} as customer,
              exists (select 1 from subscriptions s where s.customer_id = c.id and s.status = 'active') as subscribed,
              coalesce((select json_agg(json_build_object('id', g.id, 'created_at', ${isoSql('g.created_at')},
                  'modified_at', ${isoSql('g.modified_at')}, 'granted_at', ${isoSql('g.granted_at')}, 'benefit_id', b.id,
                  'benefit_type', b.type, 'properties', g.properties) order by g.granted_at, g.id)
                from benefit_grants g join benefits b on b.id = g.benefit_id
               where g.customer_id = c.id and g.granted_at is not null and g.revoked_at is null and b.deleted_at is null), '[]'::json) as grants
         from customers c
        where c.${'id' in by ? 'id' : 'external_id'} = ? and c.organization_id in (${orgIds.map(() => '?').join(', ')}) and c.deleted_at is null
        order by c.created_at asc limit 1`,
      ['id' in by ? by.id : by.externalId, ...orgIds],
    );
    if (!r) throw ResourceNotFound('Customer not found');
    if (!r.subscribed) return { ...r.customer, active_meters: [], active_subscriptions: [], granted_benefits: r.grants };
  }
  const c = await getVisibleCustomer(em, principal, by);
  return { ...serializeCustomer(c), ...(await customerState(em, c)) };
}
