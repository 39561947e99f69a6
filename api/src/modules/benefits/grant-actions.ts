/**
 * One grant or revocation of one benefit for one customer and scope (subscription or order): what the
 * benefit-grant workflow's activity runs. Idempotent: the grant row is unique per (customer, benefit,
 * subscription, order) and locked while it changes; granting a granted grant and revoking a revoked
 * one do nothing, a revoked grant can be granted again. The side effect (license key, files, meter
 * credit event, GitHub invitation, Discord role) and the grant row commit together, except the
 * third-party calls, which are idempotent on their side (PUT / DELETE).
 *
 * Outcomes: `granted`, `revoked`; `pending` when the grant waits for the customer (no GitHub / Discord
 * account chosen yet); `failed` when the third party refused for good (recorded on the grant as
 * `properties.error`); `skipped` when there is nothing to do. Retryable failures (5xx, network) are
 * thrown so the activity is retried.
 *
 * Webhooks: `benefit_grant.created` when the grant row is created (granted or pending),
 * `benefit_grant.updated` when an existing grant becomes granted (or its error changes),
 * `benefit_grant.revoked` on revocation; each with the benefit and the previous properties; and
 * `customer.state_changed` whenever the customer's granted benefits change.
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import { emitCustomerStateChanged } from '../customers/service.ts';
import { emitEvent, type WebhookEventType } from '../webhooks/outbox.ts';
import type { BenefitAction, BenefitActionGuard } from './lifecycle.ts';
import { BenefitGrant, serializeBenefitGrant } from './grants.ts';
import { IntegrationError, type Integrations } from './integrations.ts';
import type { Customer } from '../customers/entities.ts';
import type { Benefit } from './entities.ts';
import { guardHolds } from './product-sync.ts';
import { serializeBenefit } from './schemas.ts';
import { strategyFor } from './types/index.ts';
import { GrantPending } from './types/strategy.ts';

export interface BenefitActionInput {
  action: BenefitAction | 'update';
  benefitId: string;
  customerId: string;
  subscriptionId: string | null;
  orderId: string | null;
  /** Apply only if this still holds (see `BenefitActionGuard`); `skipped` otherwise. */
  guard?: BenefitActionGuard;
}

export interface BenefitActionResult {
  status: 'granted' | 'revoked' | 'pending' | 'failed' | 'skipped';
  grantId: string | null;
  detail?: string;
}

/** Types whose side effect is per account rather than per grant (two grants share one access). */
export const SHARED_ACCESS_TYPES = new Set(['github_repository', 'discord']);

function emitGrantEvent(tx: EntityManager, type: WebhookEventType, g: BenefitGrant, previous: Record<string, unknown> | null) {
  emitEvent(tx, g.benefit.organization.id, type, {
    ...serializeBenefitGrant(g),
    benefit: serializeBenefit(g.benefit),
    previous_properties: previous,
  });
}

/** customer.state_changed: the customer's granted benefits changed. */
async function emitStateChanged(tx: EntityManager, g: BenefitGrant) {
  await tx.flush();
  await emitCustomerStateChanged(tx, g.benefit.organization.id, g.customer);
}

export async function applyBenefitAction(
  em: EntityManager,
  integrations: Integrations,
  input: BenefitActionInput,
): Promise<BenefitActionResult> {
  return em.fork().transactional((tx) => applyBenefitActionIn(tx, integrations, input));
}

/**
 * `applyBenefitAction` inside the caller's transaction `tx`. With `stateChanged: false` a grant does
 * not write customer.state_changed: the caller writes it once, after its other changes (checkout
 * fulfilment, orders/fulfilment.ts). Only for types without third-party calls: a transaction should
 * not wait on GitHub.
 */
export async function applyBenefitActionIn(
  tx: EntityManager,
  integrations: Integrations,
  input: BenefitActionInput,
  opts: { stateChanged?: boolean } = {},
): Promise<BenefitActionResult> {
  const where = {
    customer: input.customerId,
    benefit: input.benefitId,
    subscriptionId: input.subscriptionId,
    orderId: input.subscriptionId ? null : input.orderId,
  };
  if (input.guard && !(await guardHolds(tx, input.guard, input.benefitId, input))) {
    return { status: 'skipped', grantId: null, detail: input.guard.has ? 'no longer granted by the product' : 'still on the product' };
  }
  let g = await tx.findOne(BenefitGrant, where, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (input.action === 'revoke') {
    if (!g) return { status: 'skipped', grantId: null, detail: 'no grant in this scope' };
    return revoke(tx, integrations, g);
  }
  if (input.action === 'update') {
    if (!g?.grantedAt) return { status: 'skipped', grantId: g?.id ?? null, detail: 'not granted' };
    return refresh(tx, integrations, g);
  }
  const isNew = !g;
  g ??= tx.create(BenefitGrant, { ...where, grantedAt: null, revokedAt: null, properties: {} });
  await tx.populate(g, ['customer', 'benefit']);
  if (g.grantedAt) return cycle(tx, integrations, g, input);
  if (g.benefit.deletedAt || g.customer.deletedAt) {
    if (isNew) tx.remove(g);
    return { status: 'skipped', grantId: null, detail: 'benefit or customer deleted' };
  }
  const previous = { ...g.properties };
  if (SHARED_ACCESS_TYPES.has(g.benefit.type) && !g.properties.account_id) {
    // The customer chose an account on another grant of the same kind: use it here too.
    const others = await tx.find(
      BenefitGrant,
      { customer: input.customerId, benefit: { type: g.benefit.type } },
      { orderBy: { modifiedAt: 'desc' } },
    );
    const other = others.find((o) => o !== g && o.properties.account_id);
    if (other?.properties.account_id) {
      g.properties = {
        ...g.properties,
        account_id: other.properties.account_id,
        account_username: other.properties.account_username ?? null,
      };
    }
  }
  const { status, detail } = await runGrant(tx, integrations, g, input);
  await tx.flush();
  if (isNew) emitGrantEvent(tx, 'benefit_grant.created', g, null);
  else if (status === 'granted' || previous.error !== g.properties.error) emitGrantEvent(tx, 'benefit_grant.updated', g, previous);
  if (opts.stateChanged === false) {
    // The caller flushes after its other changes (and writes customer.state_changed): the event goes with them.
    return { status, grantId: g.id, ...(detail ? { detail } : {}) };
  }
  if (status === 'granted') await emitStateChanged(tx, g);
  await tx.flush();
  return { status, grantId: g.id, ...(detail ? { detail } : {}) };
}

/**
 * The grant of a benefit in a scope that has none (an order or subscription created in `tx`): no
 * lookup and no flush. The caller flushes the grant with its other rows, then calls `emit`
 * (benefit_grant.created) and writes customer.state_changed itself (checkout fulfilment,
 * orders/fulfilment.ts). Only for types without third-party calls; the benefit and the customer are
 * entities of `tx`.
 */
export async function grantNewIn(
  tx: EntityManager,
  integrations: Integrations,
  input: Omit<BenefitActionInput, 'action' | 'guard' | 'benefitId' | 'customerId'> & { benefit: Benefit; customer: Customer },
): Promise<{ result: BenefitActionResult; emit: () => void }> {
  const { benefit, customer } = input;
  if (benefit.deletedAt || customer.deletedAt) {
    return { result: { status: 'skipped', grantId: null, detail: 'benefit or customer deleted' }, emit: () => {} };
  }
  const scope = { subscriptionId: input.subscriptionId, orderId: input.subscriptionId ? null : input.orderId };
  const g = tx.create(BenefitGrant, { customer, benefit, ...scope, grantedAt: null, revokedAt: null, properties: {} });
  const { status, detail } = await runGrant(tx, integrations, g, input);
  return { result: { status, grantId: g.id, ...(detail ? { detail } : {}) }, emit: () => emitGrantEvent(tx, 'benefit_grant.created', g, null) };
}

/** The strategy's grant on `g` (customer and benefit loaded): granted, or pending / failed as recorded on the grant. */
async function runGrant(
  tx: EntityManager,
  integrations: Integrations,
  g: BenefitGrant,
  input: { subscriptionId: string | null; orderId: string | null },
): Promise<{ status: BenefitActionResult['status']; detail?: string }> {
  let status: BenefitActionResult['status'];
  let detail: string | undefined;
  try {
    const props = await strategyFor(g.benefit.type).grant(
      { em: tx, integrations },
      { benefit: g.benefit, customer: g.customer, grantProperties: g.properties },
    );
    g.properties = input.subscriptionId && input.orderId ? { ...props, cycle_order_id: input.orderId } : props;
    g.grantedAt = new Date();
    g.revokedAt = null;
    status = 'granted';
  } catch (err) {
    if (err instanceof GrantPending) {
      g.properties = { ...g.properties, ...err.properties };
      status = 'pending';
      detail = err.message;
    } else if (err instanceof IntegrationError && !err.retryable) {
      g.properties = { ...g.properties, error: err.message };
      status = 'failed';
      detail = err.message;
    } else {
      throw err;
    }
  }
  return { status, detail };
}

async function revoke(tx: EntityManager, integrations: Integrations, g: BenefitGrant): Promise<BenefitActionResult> {
  await tx.populate(g, ['customer', 'benefit']);
  if (g.revokedAt && !g.grantedAt) return { status: 'revoked', grantId: g.id, detail: 'already revoked' };
  const previous = { ...g.properties };
  let detail: string | undefined;
  if (g.grantedAt) {
    let shared = false;
    if (SHARED_ACCESS_TYPES.has(g.benefit.type)) {
      // Another granted grant of this benefit (another order or subscription) keeps the access.
      shared =
        (await tx.count(BenefitGrant, {
          id: { $ne: g.id },
          customer: g.customer.id,
          benefit: g.benefit.id,
          grantedAt: { $ne: null },
        })) > 0;
    }
    if (!shared) {
      try {
        g.properties = await strategyFor(g.benefit.type).revoke(
          { em: tx, integrations },
          { benefit: g.benefit, customer: g.customer, grantProperties: g.properties },
        );
      } catch (err) {
        if (!(err instanceof IntegrationError) || err.retryable) throw err;
        g.properties = { ...g.properties, error: err.message };
        detail = err.message;
      }
    }
  }
  g.grantedAt = null;
  g.revokedAt = new Date();
  await tx.flush();
  emitGrantEvent(tx, 'benefit_grant.revoked', g, previous);
  await emitStateChanged(tx, g);
  await tx.flush();
  return { status: 'revoked', grantId: g.id, ...(detail ? { detail } : {}) };
}

/**
 * A grant request for an already granted grant: nothing, unless it is a subscription's grant and the
 * request names the order of a billing cycle not applied yet (the type's `cycle`, e.g. meter credits).
 */
async function cycle(tx: EntityManager, integrations: Integrations, g: BenefitGrant, input: BenefitActionInput): Promise<BenefitActionResult> {
  const strategy = strategyFor(g.benefit.type);
  if (!input.subscriptionId || !input.orderId || g.properties.cycle_order_id === input.orderId) {
    return { status: 'granted', grantId: g.id, detail: 'already granted' };
  }
  const previous = { ...g.properties };
  const props = strategy.cycle
    ? await strategy.cycle({ em: tx, integrations }, { benefit: g.benefit, customer: g.customer, grantProperties: g.properties })
    : g.properties;
  g.properties = { ...props, cycle_order_id: input.orderId };
  await tx.flush();
  if (strategy.cycle) emitGrantEvent(tx, 'benefit_grant.updated', g, previous);
  await tx.flush();
  return { status: 'granted', grantId: g.id, detail: 'cycled' };
}

/** Re-applies a changed benefit to a granted grant (new limits, files, repository or role). */
async function refresh(tx: EntityManager, integrations: Integrations, g: BenefitGrant): Promise<BenefitActionResult> {
  await tx.populate(g, ['customer', 'benefit']);
  const previous = { ...g.properties };
  let detail: string | undefined;
  try {
    g.properties = await strategyFor(g.benefit.type).grant(
      { em: tx, integrations },
      { benefit: g.benefit, customer: g.customer, grantProperties: g.properties, update: true },
    );
  } catch (err) {
    if (!(err instanceof GrantPending) && (!(err instanceof IntegrationError) || err.retryable)) throw err;
    g.properties = { ...g.properties, error: err.message };
    detail = err.message;
  }
  await tx.flush();
  emitGrantEvent(tx, 'benefit_grant.updated', g, previous);
  await tx.flush();
  return { status: 'granted', grantId: g.id, ...(detail ? { detail } : {}) };
}
