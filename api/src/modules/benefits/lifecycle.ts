/**
 * Entry point of benefit grants and revocations for the rest of the code base. Every request goes to
 * the durable `benefit-grant:<benefit_id>:<customer_id>` workflow of the (benefit, customer) pair
 * through `signalWithStart`: the workflow queues requests and applies them in order with retrying,
 * idempotent activities (see `grant-actions.ts`). A request that arrives after the workflow finished
 * starts a new run (the id may be reused once closed), so nothing is lost.
 *
 * Call it after the transaction that created the order / subscription (or decided the revocation)
 * committed: from an activity, or from a route through `queueBenefitRequestsDurably` (recorded in
 * the transaction, so a crash after the commit cannot lose the requests).
 */
import { randomUUID } from 'node:crypto';
import { benefitGrantWorkflowId, benefitRequestsWorkflowId } from '@emporia/workflows/ids';
import type { Deps } from '../../deps.ts';
import type { EntityManager } from '../../kit/db.ts';
import { signalWithStartWorkflow, startWorkflow, type WorkflowName } from '../../kit/workflow-starts.ts';
import { benefitGrantRun, benefitRequestsRun, type RunMetadata } from '../../kit/run-metadata.ts';
import { Customer } from '../customers/entities.ts';
import { Benefit } from './entities.ts';
import { ProductBenefit } from '../products/entities.ts';
import { BenefitGrant } from './grants.ts';

export type BenefitAction = 'grant' | 'revoke';

export interface BenefitScope {
  customerId: string;
  productId: string;
  subscriptionId: string | null;
  orderId: string | null;
}

/**
 * A condition checked again when a request is applied (product-sync.ts `guardHolds`), so a request
 * that went stale while queued is skipped. `has: true` (grants from a product): the product still
 * lists the benefit and the scope is still entitled through it (active subscription of the product,
 * purchase not revoked). `has: false` (revocations after the benefit left the product): the product
 * no longer lists it.
 */
export interface BenefitActionGuard {
  productId: string;
  has: boolean;
}

/** One queued request of a benefit-grant workflow (`update`: re-apply a changed benefit to a granted grant). */
export interface BenefitActionRequest {
  action: BenefitAction | 'update';
  subscriptionId: string | null;
  orderId: string | null;
  guard?: BenefitActionGuard;
}

/** Input of the benefit-grant workflow (`pending`: requests carried over a continue-as-new). */
export interface BenefitGrantWorkflowInput {
  benefitId: string;
  customerId: string;
  pending?: BenefitActionRequest[];
  /** Requests one run handles before continuing as new (default 200). */
  maxPerRun?: number;
}

export const BENEFIT_GRANT_WORKFLOW = 'benefitGrantWorkflow' satisfies WorkflowName;
export const BENEFIT_ACTION_SIGNAL = 'benefitAction';

/**
 * The summary and search attributes of a benefit-grant run (used only if the signal starts it): one
 * read of the benefit and the customer; null when either is gone or no database is at hand.
 */
async function benefitGrantRunOf(deps: Partial<Pick<Deps, 'orm'>>, benefitId: string, customerId: string): Promise<RunMetadata | null> {
  if (!deps.orm) return null;
  const em = deps.orm.em.fork();
  const [b, c] = await Promise.all([
    em.findOne(Benefit, { id: benefitId }, { fields: ['type', 'description', 'organization'] }),
    em.findOne(Customer, { id: customerId }, { fields: ['email'] }),
  ]);
  if (!b) return null;
  return benefitGrantRun({
    benefitId,
    customerId,
    organizationId: b.organization.id,
    benefitType: b.type,
    benefitDescription: b.description,
    customerEmail: c?.email ?? null,
  });
}

/** Queues `action` for one benefit and customer in that benefit's grant workflow (starting it if idle). */
export async function requestGrantAction(
  deps: Pick<Deps, 'temporal' | 'cfg'> & Partial<Pick<Deps, 'orm'>>,
  benefitId: string,
  customerId: string,
  request: BenefitActionRequest,
): Promise<void> {
  const input: BenefitGrantWorkflowInput = { benefitId, customerId };
  const meta = await benefitGrantRunOf(deps, benefitId, customerId).catch(() => null); // ignore: the run's search attributes only; the action is queued without them
  await signalWithStartWorkflow(deps.temporal, {
    workflowType: BENEFIT_GRANT_WORKFLOW,
    workflowId: benefitGrantWorkflowId(benefitId, customerId),
    taskQueue: deps.cfg.TEMPORAL_TASK_QUEUE,
    args: [input],
    signal: BENEFIT_ACTION_SIGNAL,
    signalArgs: [request],
    metadata: meta,
  });
}

/**
 * For every non-deleted benefit of the product: request `action` for the customer, scoped to the
 * subscription (recurring) or the order (one-time). Returns once every request is queued; the grants
 * themselves happen in the background. A `grant` for a subscription whose grant is already granted,
 * with the order of a new billing cycle, applies the cycle (meter credits credit the period's units
 * again); the same order twice does nothing.
 */
export async function requestBenefitAction(deps: Deps, action: BenefitAction, scope: BenefitScope): Promise<void> {
  const links = await deps.orm.em
    .fork()
    .find(ProductBenefit, { product: scope.productId, benefit: { deletedAt: null } }, { orderBy: { order: 'asc' } });
  for (const link of links) {
    await requestGrantAction(deps, link.benefit.id, scope.customerId, {
      action,
      subscriptionId: scope.subscriptionId,
      // With a subscription the grant is the subscription's; the order names the billing cycle.
      orderId: scope.orderId,
      ...(action === 'grant' ? { guard: { productId: scope.productId, has: true } } : {}),
    });
  }
}

/**
 * After a benefit changed in a way its grants must follow (`update`: properties that need re-applying,
 * e.g. new files or another repository) or was deleted (`revoke`): queue the request for each of its
 * grants that is granted (or, for `revoke`, not revoked yet).
 */
export async function requestBenefitGrantsAction(deps: Deps, benefitId: string, action: 'update' | 'revoke'): Promise<number> {
  const grants = await deps.orm.em
    .fork()
    .find(BenefitGrant, action === 'update' ? { benefit: benefitId, grantedAt: { $ne: null } } : { benefit: benefitId, revokedAt: null });
  for (const g of grants) {
    await requestGrantAction(deps, benefitId, g.customer.id, {
      action,
      subscriptionId: g.subscriptionId ?? null,
      orderId: g.orderId ?? null,
    });
  }
  return grants.length;
}

/** A deleted customer loses every benefit: queue a revocation for each of their grants not revoked yet. */
export async function revokeCustomerGrants(deps: Deps, customerId: string): Promise<number> {
  const grants = await deps.orm.em.fork().find(BenefitGrant, { customer: customerId, revokedAt: null });
  for (const g of grants) {
    await requestGrantAction(deps, g.benefit.id, customerId, {
      action: 'revoke',
      subscriptionId: g.subscriptionId ?? null,
      orderId: g.orderId ?? null,
    });
  }
  return grants.length;
}

/**
 * Requests into benefit-grant workflows that a committed change calls for. They are queued by a
 * `benefit-requests` workflow whose start is recorded in the change's transaction
 * (startWorkflow): if the process dies between commit and start, the worker's sweeper starts
 * it, so a deleted customer still loses their grants and a changed benefit still reaches its holders.
 */
export type BenefitRequests =
  | { kind: 'customer-deleted'; customerId: string }
  | { kind: 'benefit-changed'; benefitId: string; action: 'update' | 'revoke' }
  | { kind: 'grant-requests'; benefitId: string; customerId: string; requests: BenefitActionRequest[] };

export function queueBenefitRequestsDurably(
  tx: EntityManager,
  after: (fn: () => Promise<unknown>) => void,
  deps: Deps,
  input: BenefitRequests,
  /** The organization of the change (the run's OrganizationId search attribute). */
  organizationId: string | null = null,
): void {
  startWorkflow(tx, after, deps, {
    workflowType: 'benefitRequestsWorkflow',
    taskQueue: deps.cfg.TEMPORAL_TASK_QUEUE,
    workflowId: benefitRequestsWorkflowId(randomUUID()),
    args: [input],
    metadata: benefitRequestsRun(input, organizationId),
  });
}

/** The activity of the benefit-requests workflow: queues the requests (each is idempotent). */
export async function runBenefitRequests(deps: Deps, input: BenefitRequests): Promise<number> {
  switch (input.kind) {
    case 'customer-deleted':
      return revokeCustomerGrants(deps, input.customerId);
    case 'benefit-changed':
      return requestBenefitGrantsAction(deps, input.benefitId, input.action);
    case 'grant-requests':
      for (const r of input.requests) await requestGrantAction(deps, input.benefitId, input.customerId, r);
      return input.requests.length;
  }
}
