/**
 * The account a GitHub or Discord grant acts on, chosen by the customer in the portal
 * (`PATCH /v1/customer-portal/benefit-grants/{id}` with `properties.account_id`). Customers cannot link
 * accounts through OAuth here, so the account is checked with the provider instead: a GitHub login or
 * user id, a Discord user id; one the provider does not know (or an integration that is not
 * configured) is a 422 "OAuth account does not exist." on `body.properties.account_id`. The grant
 * records the account (`account_id` = the provider's user id, `account_username`); a pending grant is
 * then granted, and a granted one moves to the new account (revoke, then grant), by the benefit-grant
 * workflow.
 */
import type { EntityManager } from '../../kit/db.ts';
import { ApiError, fieldError, NotPermitted, ResourceNotFound } from '../../kit/errors.ts';
import type { BenefitType } from './entities.ts';
import { BenefitGrant } from './grants.ts';
import { IntegrationError, type ExternalAccount, type Integrations } from './integrations.ts';
import type { BenefitActionRequest } from './lifecycle.ts';

export type GrantUpdateInput =
  | { benefit_type: Exclude<BenefitType, 'discord' | 'github_repository'> }
  | { benefit_type: 'discord' | 'github_repository'; properties: { account_id: string } };

const notFound = (accountId: string) =>
  fieldError(['body', 'properties', 'account_id'], 'OAuth account does not exist.', 'value_error', accountId);

/** The provider's account for an id (or GitHub login); 422 when unknown, 502 when the provider fails. */
export async function findExternalAccount(
  integrations: Integrations,
  type: 'discord' | 'github_repository',
  accountId: string,
): Promise<ExternalAccount> {
  let account: ExternalAccount | null;
  try {
    account = type === 'github_repository' ? await integrations.github.findAccount(accountId) : await integrations.discord.findAccount(accountId);
  } catch (err) {
    if (err instanceof IntegrationError && !err.retryable) throw notFound(accountId);
    throw new ApiError(502, 'BadGateway', `Could not reach ${type === 'discord' ? 'Discord' : 'GitHub'}; try again.`);
  }
  if (!account) throw notFound(accountId);
  return account;
}

/**
 * Applies a portal update to a grant of the session's customer: another customer's grant and an
 * unknown one are 404, a revoked one 403, a `benefit_type` other than the benefit's 422. Answers whether
 * the grant changed and which requests to queue for it (after commit).
 */
export async function updateGrantAsCustomer(
  em: EntityManager,
  integrations: Integrations,
  customerId: string,
  id: string,
  input: GrantUpdateInput,
): Promise<{ grant: BenefitGrant; changed: boolean; previous: Record<string, unknown>; requests: BenefitActionRequest[] }> {
  // Another customer's grant answers exactly like an unknown one, so grant ids cannot be probed.
  const grant = await em.findOne(BenefitGrant, { id, customer: customerId }, { populate: ['customer', 'benefit', 'benefit.organization'] });
  if (!grant) throw ResourceNotFound('Benefit grant not found');
  if (grant.revokedAt != null) throw NotPermitted('Cannot update a revoked benefit grant.');
  if (input.benefit_type !== grant.benefit.type) {
    throw fieldError(['body', 'benefit_type'], `Benefit type must be '${grant.benefit.type}'.`, 'value_error', input.benefit_type);
  }
  const previous = grant.properties;
  if (!('properties' in input)) return { grant, changed: false, previous, requests: [] };
  const account = await findExternalAccount(integrations, input.benefit_type, input.properties.account_id);
  const scope = { subscriptionId: grant.subscriptionId ?? null, orderId: grant.orderId ?? null };
  if (grant.properties.account_id === account.id && grant.grantedAt) return { grant, changed: false, previous, requests: [] };
  const wasGranted = grant.grantedAt != null && grant.properties.account_id !== account.id;
  const { error: _cleared, ...rest } = grant.properties;
  grant.properties = { ...rest, account_id: account.id, account_username: account.username };
  return {
    grant,
    changed: true,
    previous,
    requests: [...(wasGranted ? [{ action: 'revoke' as const, ...scope }] : []), { action: 'grant' as const, ...scope }],
  };
}
