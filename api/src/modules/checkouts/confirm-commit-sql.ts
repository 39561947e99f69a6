/**
 * The confirmation's step 3 (confirm.ts `commitConfirmation`) for the common checkout (confirm-fast.ts)
 * as ONE guarded statement instead of the ORM's transaction of about ten: the checkout locked
 * (`FOR UPDATE`, its row only) if it is still the version step 1 left (`xmin`) and open; the buyer's
 * existing customer locked (`FOR NO KEY UPDATE`, after the checkout: docs/durability.md "Row locks") if
 * it is still the version step 1 read; no other active subscription when the product is recurring; then
 * the charge attempt settled (`pending` → `confirmed`), and only if it was still pending (or there is no
 * charge): the customer created or completed, the checkout confirmed, the checkout-scoped customer
 * session, the `checkout.updated` and `customer.*` events and the `checkout-confirm` workflow start
 * (`workflow_starts`, started after the statement committed, as `startWorkflow` does).
 *
 * An exception to "one transaction owner" (CONVENTIONS), as `subscriptions/renewal-sql.ts`: the
 * statement is its own transaction, all of it or nothing. When a guard does not hold it writes nothing
 * and answers `null`, and the caller runs the ORM path, which words the refusal (or finds the customer
 * another checkout created meanwhile: a unique violation answers `'raced'`). The rows and events are
 * the ORM path's: tests/confirm/confirm-fast.test.ts confirms both on identical input and compares them.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { EntityManager } from '../../kit/db.ts';
import { randomToken, sha256Hex } from '../../kit/crypto.ts';
import { startRecorded, type WorkflowStartSpec } from '../../kit/workflow-starts.ts';
import type { Customer } from '../customers/entities.ts';
import { serializeCustomer } from '../customers/schemas.ts';
import { CUSTOMER_SESSION_TOKEN_PREFIX, CUSTOMER_SESSION_TTL_MS } from '../customer-sessions/service.ts';
import type { ProcessorPaymentMethod } from '../payments/processor.ts';
import { ACTIVE_SUBSCRIPTION_STATUSES } from '../subscriptions/entities.ts';
import type { Checkout } from './entities.ts';
import { serializeCheckoutWithProducts, type CheckoutProductsRead } from './schemas.ts';

/** The `checkout-confirm` workflow start of a confirmed checkout (the route's), and what starting it needs. */
export interface ConfirmStart {
  workflow: (c: Checkout) => WorkflowStartSpec<'checkoutConfirmWorkflow'>;
  deps: Parameters<typeof startRecorded>[0];
}

/** How many confirmations this process committed with the statement (the equivalence test checks which path ran). */
export const confirmCommitSqlStats = { used: 0 };

export interface CommonCommit {
  checkout: Checkout;
  /** The buyer's customer step 1 found, and its row's version then; null: a new customer. */
  customer: Customer | null;
  customerVersion: string | null;
  /** The checkout row's version step 1 left. */
  version: string;
  products: CheckoutProductsRead;
  chargeId: string | null;
  /** The charge attempt to settle (`pending` → `confirmed`); null without a charge. */
  attemptKey: string | null;
  processorCustomerId: string | null;
  savedMethod: ProcessorPaymentMethod | null;
}

const WRITE_SQL = `with lk as (
    select c.id from checkouts c where c.id = $1 and c.xmin = $2::text::xid and c.status = 'open' for update
  ), lc as (
    select cu.id from customers cu, lk where cu.id = $3::uuid and cu.xmin = $4::text::xid and cu.deleted_at is null for no key update of cu
  ), g as (
    select 1 from lk
     where ($4::text is null or exists (select 1 from lc))
       and not ($5::boolean and exists (select 1 from subscriptions s
         where s.organization_id = $6 and s.customer_id = $3::uuid and s.status = any($7::text[])))
  ), att as (
    update checkout_charge_attempts a set status = 'confirmed', charge_id = $8, settled_at = $9
      from g where a.idempotency_key = $10 and a.status = 'pending' returning a.id
  ), ok as (
    select 1 from g where $10::text is null or exists (select 1 from att)
  ), cn as (
    insert into customers (id, created_at, modified_at, organization_id, email, email_verified, name, external_id, billing_address,
      tax_id, metadata, user_id, deleted_at, processor_customer_id)
    select $3::uuid, $9, null, $6, $11, false, $12, $13, $14::jsonb, null, $15::jsonb, null, null, $16 from ok where $4::text is null
  ), cu as (
    update customers set name = $12, billing_address = $14::jsonb, processor_customer_id = $16, modified_at = $9
      from ok where customers.id = $3::uuid and $4::text is not null and $17::boolean
  ), ck as (
    update checkouts set status = 'confirmed', customer_id = $3::uuid, processor_charge_id = $8,
      processor_payment_method = $18::jsonb, modified_at = $9
      from ok where checkouts.id = $1
  ), se as (
    insert into customer_sessions (id, created_at, modified_at, customer_id, token_hash, expires_at, checkout_id)
    select $19, $9, null, $3::uuid, $20, $21, $1 from ok
  ), ev as (
    insert into outbox_events (id, created_at, modified_at, organization_id, type, data, dispatched_at)
    select (x.e->>'id')::uuid, $9, null, $6, x.e->>'type', x.e->'data', null from ok cross join jsonb_array_elements($22::jsonb) with ordinality as x(e, n)
     order by x.n
  ), ws as (
    insert into workflow_starts (id, created_at, workflow_type, workflow_id, task_queue, args, metadata, started_at)
    select $23, $9, $24, $25, $26, $27::jsonb, $28::jsonb, null from ok
  )
  select (select count(*) from g)::int as g, (select count(*) from ok)::int as ok`;

const isUniqueViolation = (err: unknown) => (err as { code?: string } | null)?.code === '23505';

/** Runs the statement as a named prepared statement (planned once per connection). */
async function run<T>(em: EntityManager, values: unknown[]): Promise<T[]> {
  const pool = await (em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient();
  return (await pool.query({ name: 'checkout_confirm_commit', text: WRITE_SQL, values })).rows as T[];
}

/**
 * Step 3 of the common confirmation (see the file comment). Answers the confirmed checkout (a view of
 * the step-1 entity as written: the entity itself is not changed), the session token and the customer
 * it created; `null` when a guard did not hold and `'raced'` when another checkout created the
 * customer meanwhile (nothing written in either case).
 */
export async function commitCommon(
  em: EntityManager,
  publicUrl: string,
  x: CommonCommit,
  start: ConfirmStart,
): Promise<{ checkout: Checkout; products: CheckoutProductsRead; customerSessionToken: string; customerCreated: Customer | null } | 'raced' | null> {
  const c = x.checkout;
  const now = new Date();
  const existing = x.customer;
  // The customer as findOrCreateCustomer and step 3 leave it: an existing one gets the checkout's name
  // and billing address where it has none, and the processor's customer id where it has none.
  const updated = existing != null && ((!existing.name && !!c.customerName) || (!existing.billingAddress && !!c.customerBillingAddress));
  const changedRow = existing != null && (updated || (!existing.processorCustomerId && !!x.processorCustomerId));
  const customer = {
    id: existing?.id ?? randomUUID(),
    createdAt: existing?.createdAt ?? now,
    modifiedAt: existing ? (changedRow ? now : (existing.modifiedAt ?? null)) : null,
    organization: c.organization,
    email: existing ? existing.email : c.customerEmail!,
    emailVerified: existing ? existing.emailVerified : false,
    name: existing ? (!existing.name && c.customerName ? c.customerName : (existing.name ?? null)) : (c.customerName ?? null),
    externalId: existing ? (existing.externalId ?? null) : (c.customerExternalId ?? null),
    billingAddress: existing?.billingAddress ?? c.customerBillingAddress ?? null,
    taxId: existing ? (existing.taxId ?? null) : null,
    metadata: existing ? existing.metadata : { ...c.customerMetadata },
    deletedAt: null,
    processorCustomerId: existing?.processorCustomerId ?? x.processorCustomerId,
  } as unknown as Customer;

  // The checkout as the statement writes it: own properties over the entity (its setters would change it).
  const own = (value: unknown) => ({ value, enumerable: true });
  const confirmed = Object.create(c, {
    status: own('confirmed'),
    customer: own(existing ?? customer),
    processorChargeId: own(x.chargeId),
    processorPaymentMethod: own(x.savedMethod),
    modifiedAt: own(now),
  }) as Checkout;
  const events: { id: string; type: string; data: unknown }[] = [
    { id: randomUUID(), type: 'checkout.updated', data: serializeCheckoutWithProducts(confirmed, publicUrl, x.products) },
  ];
  if (!existing) events.push({ id: randomUUID(), type: 'customer.created', data: serializeCustomer(customer) });
  else if (updated) events.push({ id: randomUUID(), type: 'customer.updated', data: serializeCustomer(customer) });
  const spec = start.workflow(confirmed);
  const token = randomToken(CUSTOMER_SESSION_TOKEN_PREFIX, 32);
  const settings = c.organization.subscriptionSettings as { allow_multiple_subscriptions?: boolean };
  const startId = randomUUID();
  const json = (v: unknown) => (v == null ? null : JSON.stringify(v));
  let r: { g: number; ok: number } | undefined;
  try {
    [r] = await run<{ g: number; ok: number }>(em, [
      c.id, // $1
      x.version,
      customer.id,
      existing ? x.customerVersion : null,
      c.product.recurringInterval != null && existing != null && !settings.allow_multiple_subscriptions, // $5
      c.organization.id,
      [...ACTIVE_SUBSCRIPTION_STATUSES],
      x.chargeId,
      now,
      x.attemptKey, // $10
      customer.email,
      customer.name ?? null,
      customer.externalId ?? null,
      json(customer.billingAddress),
      json(customer.metadata), // $15
      customer.processorCustomerId ?? null,
      changedRow,
      json(x.savedMethod),
      randomUUID(),
      sha256Hex(token), // $20
      new Date(now.getTime() + CUSTOMER_SESSION_TTL_MS),
      JSON.stringify(events),
      startId,
      spec.workflowType,
      spec.workflowId, // $25
      spec.taskQueue,
      JSON.stringify(spec.args),
      json(spec.metadata ?? null),
    ]);
  } catch (err) {
    if (isUniqueViolation(err) && !existing) return 'raced';
    throw err;
  }
  if (!r || r.ok !== 1) return null;
  confirmCommitSqlStats.used++;
  await startRecorded(start.deps, startId, spec);
  return { checkout: confirmed, products: x.products, customerSessionToken: token, customerCreated: existing ? null : customer };
}
