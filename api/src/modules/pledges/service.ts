/**
 * Pledge rules. States (SPEC section 4): a `pay_upfront` pledge starts `initiated` (its payment is
 * not confirmed yet), the others `created`; then
 *
 *   initiated → created | cancelled
 *   created   → pending | refunded | disputed | charge_disputed | cancelled
 *   pending   → refunded | disputed | charge_disputed
 *   disputed  → pending | refunded
 *   charge_disputed → refunded
 *
 * (`pending`: the issue is solved and the payout is scheduled, two weeks on, the window for disputes;
 * refunded and cancelled are final). Every write emits `pledge.created` / `pledge.updated` into the
 * outbox in the caller's transaction. Services never commit on their own.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '../../kit/db.ts';
import { ResourceNotFound, fieldError } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { visibleOrganizationIds } from '../organizations/scope.ts';
import { Repository } from '../repositories/entities.ts';
import { Pledge, type PledgeState } from './entities.ts';
import { serializePledge, type PledgeCreate } from './schemas.ts';

export const PLEDGE_TRANSITIONS: Record<PledgeState, readonly PledgeState[]> = {
  initiated: ['created', 'cancelled'],
  created: ['pending', 'refunded', 'disputed', 'charge_disputed', 'cancelled'],
  pending: ['refunded', 'disputed', 'charge_disputed'],
  disputed: ['pending', 'refunded'],
  charge_disputed: ['refunded'],
  refunded: [],
  cancelled: [],
};

/** States whose money still counts towards the issue's funding. */
const FUNDING_STATES: PledgeState[] = ['created', 'pending', 'disputed'];
const PAYOUT_DELAY_MS = 14 * 86_400_000;
export const PLEDGE_POPULATE = ['repository.externalOrganization', 'repository.organization'] as const;

export async function issuePledgesSum(em: EntityManager, p: Pick<Pledge, 'repository' | 'issueNumber'>): Promise<number> {
  const [row] = await em.execute<{ sum: string | null }[]>(
    `select sum(amount) as sum from pledges where repository_id = ? and issue_number = ? and state in (${FUNDING_STATES.map(() => '?').join(', ')})`,
    [p.repository.id, p.issueNumber, ...FUNDING_STATES],
  );
  return Number(row?.sum ?? 0);
}

export async function emitPledge(em: EntityManager, p: Pledge, type: 'pledge.created' | 'pledge.updated'): Promise<void> {
  await em.flush();
  emitEvent(em, p.organization.id, type, serializePledge(p, await issuePledgesSum(em, p)));
}

/** A pledge on an issue of one of `orgIds`' repositories (422 at the field for another's or a too small amount). */
export async function createPledge(em: EntityManager, orgIds: string[], input: PledgeCreate): Promise<Pledge> {
  const repository = await em.findOne(Repository, { id: input.repository_id, organization: { $in: orgIds } }, { populate: ['organization'] });
  if (!repository?.organization) throw fieldError(['body', 'repository_id'], 'Repository not found.', 'value_error', input.repository_id);
  const minimum = repository.organization.pledgeMinimumAmount ?? 2000;
  if (input.amount < minimum) {
    throw fieldError(['body', 'amount'], `The minimum pledge is ${minimum} (minor units).`, 'value_error', input.amount);
  }
  const sibling = await em.findOne(Pledge, { repository: repository.id, issueNumber: input.issue_number }, { fields: ['issueId'] });
  const pledge = em.create(Pledge, {
    organization: repository.organization,
    repository,
    issueId: sibling?.issueId ?? randomUUID(),
    issueNumber: input.issue_number,
    issueTitle: input.issue_title,
    amount: input.amount,
    currency: input.currency,
    state: input.type === 'pay_upfront' ? 'initiated' : 'created',
    type: input.type,
    pledgerName: input.pledger_name,
    pledgerGithubUsername: input.pledger_github_username ?? null,
    pledgerAvatarUrl: input.pledger_avatar_url ?? null,
    refundedAt: null,
    scheduledPayoutAt: null,
    hostedInvoiceUrl: null,
  });
  await em.populate(pledge, PLEDGE_POPULATE);
  await emitPledge(em, pledge, 'pledge.created');
  return pledge;
}

export async function getVisiblePledge(em: EntityManager, orgIds: string[], id: string): Promise<Pledge> {
  const p = await em.findOne(Pledge, { id, organization: { $in: orgIds } }, { populate: PLEDGE_POPULATE });
  if (!p) throw ResourceNotFound('Pledge not found');
  return p;
}

/** Moves a pledge to `to` (422 at `body.state` when the table above does not allow it). */
export async function transitionPledge(em: EntityManager, p: Pledge, to: PledgeState, now = new Date()): Promise<void> {
  if (!PLEDGE_TRANSITIONS[p.state].includes(to)) {
    throw fieldError(['body', 'state'], `A ${p.state} pledge cannot become ${to}.`, 'value_error', to);
  }
  p.state = to;
  if (to === 'refunded') p.refundedAt = now;
  if (to === 'pending') p.scheduledPayoutAt = new Date(now.getTime() + PAYOUT_DELAY_MS);
  if (to === 'refunded' || to === 'cancelled') p.scheduledPayoutAt = null;
  await emitPledge(em, p, 'pledge.updated');
}

/** POST /v1/pledges/: records the pledge and answers it with its issue's pledged sum. */
export async function recordPledge(tx: EntityManager, principal: Principal, input: PledgeCreate) {
  const p = await createPledge(tx, await visibleOrganizationIds(tx, principal), input);
  await tx.flush();
  return serializePledge(p, await issuePledgesSum(tx, p));
}

/** POST /v1/pledges/:id/state: moves a visible pledge to `state` and answers it. */
export async function movePledge(tx: EntityManager, principal: Principal, id: string, state: PledgeState) {
  const p = await getVisiblePledge(tx, await visibleOrganizationIds(tx, principal), id);
  await transitionPledge(tx, p, state);
  await tx.flush();
  return serializePledge(p, await issuePledgesSum(tx, p));
}
