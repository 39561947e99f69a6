/**
 * A product's benefits changed (POST /v1/products/{id}/benefits): every customer entitled through the
 * product gets the added benefits and loses the removed ones, in the background. The API records a
 * `product-benefits:<product_id>:<change_id>` workflow start with the change; the workflow pages through
 * the scopes with `syncProductBenefitsPage` and queues one request per (benefit, customer, scope) into
 * the per-(benefit, customer) benefit-grant workflows (lifecycle.ts), which apply them in order and
 * write the benefit_grant.* webhooks.
 *
 * Entitlement follows fulfilment and refunds: a subscription of the product that is active or trialing
 * (its grant is the subscription's), or a one-time purchase of the product (its grant is the order's)
 * whose checkout completed (not compensated) and whose benefits no refund revoked (a succeeded refund
 * with revoke_benefits); the customer not deleted.
 *
 * Phases: `subscriptions` and `orders` (entitled scopes: grant the added benefits, revoke the removed
 * ones), then `grants` (grants of the removed benefits still held in the product's scopes that are not
 * entitled, e.g. a past-due subscription). Other products' scopes are never touched: a customer who
 * also holds a removed benefit through another product keeps that grant.
 *
 * Requests carry a guard (`BenefitActionGuard`) that is checked again when the grant workflow applies
 * them, so a request that went stale (the benefit came back or left again, the subscription ended) is
 * skipped; with the in-order grant workflows, later changes always win. Every request is idempotent,
 * so a retried page or a second change covering the same scope does no harm.
 */
import type { Deps } from '../../deps.ts';
import type { EntityManager } from '../../kit/db.ts';
import { runSql } from '../events/sql.ts';
import { ProductBenefit } from '../products/entities.ts';
import { requestGrantAction, type BenefitActionGuard, type BenefitActionRequest } from './lifecycle.ts';

export const PRODUCT_BENEFITS_WORKFLOW = 'productBenefitsWorkflow';

export interface ProductBenefitsChange {
  productId: string;
  /** Benefit ids added to the product / removed from it by the change. */
  added: string[];
  removed: string[];
}

export type ProductBenefitsPhase = 'subscriptions' | 'orders' | 'grants';

export interface ProductBenefitsCursor {
  phase: ProductBenefitsPhase;
  /** The last id handled in the phase (subscription, order or grant id); null at its start. */
  after: string | null;
}

export interface ProductBenefitsPage {
  /** Requests queued by this page. */
  requested: number;
  /** Where the next page starts; null when done. */
  next: ProductBenefitsCursor | null;
}

/** Requests queued by one page at most (scopes × changed benefits), to keep an activity short. */
const REQUESTS_PER_PAGE = 400;
/** Requests queued concurrently. */
const PARALLEL = 8;

// Entitlement, as SQL on a subscription `s` / an order `o` (the same rule as `scopeEntitled`).
const SUBSCRIPTION_ENTITLED = `s.status in ('active', 'trialing')
  and exists (select 1 from customers c where c.id = s.customer_id and c.deleted_at is null)`;
const ORDER_ENTITLED = `o.subscription_id is null and o.billing_reason = 'purchase'
  and exists (select 1 from customers c where c.id = o.customer_id and c.deleted_at is null)
  and (o.checkout_id is null or exists (select 1 from checkouts k where k.id = o.checkout_id and k.status in ('confirmed', 'succeeded')))
  and not exists (select 1 from refunds r where r.order_id = o.id and r.revoke_benefits and r.status = 'succeeded')`;

interface ScopeRow {
  id: string;
  customer_id: string;
}

interface GrantRow {
  id: string;
  benefit_id: string;
  customer_id: string;
  subscription_id: string | null;
  order_id: string | null;
}

/**
 * Entitled rows of the product after `after`, by id: subscriptions (`s`, SUBSCRIPTION_ENTITLED) or
 * one-time orders (`o`, ORDER_ENTITLED).
 */
function entitledRows(em: EntityManager, from: 'subscriptions s' | 'orders o', entitled: string, productId: string, after: string | null, limit: number) {
  const a = from.slice(-1);
  return runSql<ScopeRow>(
    em,
    `select ${a}.id, ${a}.customer_id from ${from}
      where ${a}.product_id = $1 and ($2::uuid is null or ${a}.id > $2::uuid) and ${entitled}
      order by ${a}.id limit $3`,
    [productId, after, limit],
  );
}

/**
 * Grants of `benefitIds` not revoked yet, held through a scope of the product that is not entitled
 * (entitled scopes had their revocation queued in the first phases), after `after`, by id.
 */
function heldGrants(em: EntityManager, productId: string, benefitIds: string[], after: string | null, limit: number) {
  return runSql<GrantRow>(
    em,
    `select g.id, g.benefit_id, g.customer_id, g.subscription_id, g.order_id from benefit_grants g
      where g.benefit_id = any($1::uuid[]) and g.revoked_at is null and ($3::uuid is null or g.id > $3::uuid)
        and (
          (g.subscription_id is not null and exists (
            select 1 from subscriptions s where s.id = g.subscription_id and s.product_id = $2 and not (${SUBSCRIPTION_ENTITLED})))
          or (g.subscription_id is null and exists (
            select 1 from orders o where o.id = g.order_id and o.product_id = $2 and o.subscription_id is null and not (${ORDER_ENTITLED})))
        )
      order by g.id limit $4`,
    [benefitIds, productId, after, limit],
  );
}

/** Whether the subscription (or one-time order) is an entitled scope of the product right now. */
export async function scopeEntitled(
  em: EntityManager,
  productId: string,
  scope: { subscriptionId: string | null; orderId: string | null },
): Promise<boolean> {
  if (scope.subscriptionId) {
    const { rows } = await runSql(em, `select 1 from subscriptions s where s.id = $1 and s.product_id = $2 and ${SUBSCRIPTION_ENTITLED}`, [
      scope.subscriptionId,
      productId,
    ]);
    return rows.length > 0;
  }
  if (!scope.orderId) return false;
  const { rows } = await runSql(em, `select 1 from orders o where o.id = $1 and o.product_id = $2 and ${ORDER_ENTITLED}`, [
    scope.orderId,
    productId,
  ]);
  return rows.length > 0;
}

/**
 * Whether a guarded request still applies: `has` (a grant) needs the benefit on the product and the
 * scope entitled through it; `!has` (a revocation) needs the benefit off the product.
 */
export async function guardHolds(
  em: EntityManager,
  guard: BenefitActionGuard,
  benefitId: string,
  scope: { subscriptionId: string | null; orderId: string | null },
): Promise<boolean> {
  const linked = (await em.count(ProductBenefit, { product: guard.productId, benefit: benefitId })) > 0;
  if (!guard.has) return !linked;
  return linked && scopeEntitled(em, guard.productId, scope);
}

/** Runs `fn` over `items`, `PARALLEL` at a time. */
async function each<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += PARALLEL) await Promise.all(items.slice(i, i + PARALLEL).map(fn));
}

/** One page of the change: queues its requests and answers where the next page starts. */
export async function syncProductBenefitsPage(
  deps: Deps,
  change: ProductBenefitsChange,
  cursor: ProductBenefitsCursor,
): Promise<ProductBenefitsPage> {
  const em = deps.orm.em.fork();
  const { productId, added, removed } = change;
  const grant = { productId, has: true };
  const revoke = { productId, has: false };

  if (cursor.phase === 'grants') {
    if (!removed.length) return { requested: 0, next: null };
    const { rows } = await heldGrants(em, productId, removed, cursor.after, REQUESTS_PER_PAGE);
    await each(rows, (g) =>
      requestGrantAction(deps, g.benefit_id, g.customer_id, {
        action: 'revoke',
        subscriptionId: g.subscription_id,
        orderId: g.subscription_id ? null : g.order_id,
        guard: revoke,
      }),
    );
    const last = rows.at(-1);
    return { requested: rows.length, next: rows.length < REQUESTS_PER_PAGE || !last ? null : { phase: 'grants', after: last.id } };
  }

  const perScope = added.length + removed.length;
  const nextPhase: ProductBenefitsCursor = cursor.phase === 'subscriptions' ? { phase: 'orders', after: null } : { phase: 'grants', after: null };
  if (!perScope) return { requested: 0, next: nextPhase };
  const limit = Math.max(10, Math.floor(REQUESTS_PER_PAGE / perScope));
  const isSubscription = cursor.phase === 'subscriptions';
  const { rows } = isSubscription
    ? await entitledRows(em, 'subscriptions s', SUBSCRIPTION_ENTITLED, productId, cursor.after, limit)
    : await entitledRows(em, 'orders o', ORDER_ENTITLED, productId, cursor.after, limit);
  const requests: { benefitId: string; customerId: string; request: BenefitActionRequest }[] = [];
  for (const row of rows) {
    // Scoped like the grants fulfilment made: the subscription's, or the one-time order's.
    const scope = isSubscription ? { subscriptionId: row.id, orderId: null } : { subscriptionId: null, orderId: row.id };
    for (const benefitId of added) requests.push({ benefitId, customerId: row.customer_id, request: { action: 'grant', ...scope, guard: grant } });
    for (const benefitId of removed) requests.push({ benefitId, customerId: row.customer_id, request: { action: 'revoke', ...scope, guard: revoke } });
  }
  await each(requests, (r) => requestGrantAction(deps, r.benefitId, r.customerId, r.request));
  const last = rows.at(-1);
  return {
    requested: requests.length,
    next: rows.length < limit || !last ? nextPhase : { phase: cursor.phase, after: last.id },
  };
}
