/**
 * Wire shapes of legacy pledges, as `@polar-sh/sdk` 0.29.3 parses them (`Pledge`, with its `Issue`,
 * and the `pledge.created` / `pledge.updated` webhook payloads): every key present, nulls explicit.
 */
import { z } from 'zod/v4';
import { repositorySchema, serializeRepository } from '../repositories/schemas.ts';
import { PLEDGE_STATES, PLEDGE_TYPES, type Pledge } from './entities.ts';

const iso = (d: Date | null | undefined) => d?.toISOString() ?? null;

export const pledgeCreateSchema = z.object({
  repository_id: z.uuid(),
  issue_number: z.number().int().min(1).max(2_147_483_647),
  issue_title: z.string().trim().min(1).max(255),
  /** Minor units; at least the organization's `pledge_minimum_amount`. */
  amount: z.number().int().min(1).max(100_000_000),
  currency: z.literal('usd').default('usd'),
  type: z.enum(PLEDGE_TYPES),
  pledger_name: z.string().trim().min(1).max(255),
  pledger_github_username: z.string().trim().min(1).max(39).nullish(),
  pledger_avatar_url: z.url({ protocol: /^https?$/ }).max(2048).nullish(),
});
export type PledgeCreate = z.output<typeof pledgeCreateSchema>;

export const pledgeStateUpdateSchema = z.object({ state: z.enum(PLEDGE_STATES) });

const currencyAmount = z.object({ currency: z.string(), amount: z.number().int() });

export const issueSchema = z.object({
  id: z.uuid(),
  platform: z.literal('github'),
  number: z.number().int(),
  title: z.string(),
  body: z.string().nullable(),
  comments: z.number().int().nullable(),
  labels: z.array(z.object({ name: z.string(), color: z.string() })),
  author: z.null(),
  assignees: z.null(),
  reactions: z.null(),
  state: z.enum(['open', 'closed']),
  issue_closed_at: z.string().nullable(),
  issue_modified_at: z.string().nullable(),
  issue_created_at: z.string(),
  needs_confirmation_solved: z.boolean(),
  confirmed_solved_at: z.string().nullable(),
  funding: z.object({ funding_goal: currencyAmount.nullable(), pledges_sum: currencyAmount.nullable() }),
  repository: repositorySchema,
  upfront_split_to_contributors: z.number().int().nullable(),
  pledge_badge_currently_embedded: z.boolean(),
  badge_custom_content: z.string().nullable(),
});

const pledgerSchema = z.object({ name: z.string(), github_username: z.string().nullable(), avatar_url: z.string().nullable() });

export const pledgeSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  amount: z.number().int(),
  currency: z.string(),
  state: z.enum(PLEDGE_STATES),
  type: z.enum(PLEDGE_TYPES),
  refunded_at: z.string().nullable(),
  scheduled_payout_at: z.string().nullable(),
  issue: issueSchema,
  pledger: pledgerSchema.nullable(),
  hosted_invoice_url: z.string().nullable(),
  authed_can_admin_sender: z.boolean(),
  authed_can_admin_received: z.boolean(),
  created_by: pledgerSchema.nullable(),
});
export type PledgeOut = z.infer<typeof pledgeSchema>;

/**
 * Needs `repository.externalOrganization` and `repository.organization` loaded. `pledgesSum`: the
 * live pledges of the issue (service.ts `issuePledgesSum`). Read by the receiving organization, who
 * administers the received side.
 */
export function serializePledge(p: Pledge, pledgesSum: number): PledgeOut {
  const pledger = { name: p.pledgerName, github_username: p.pledgerGithubUsername ?? null, avatar_url: p.pledgerAvatarUrl ?? null };
  return {
    id: p.id,
    created_at: p.createdAt.toISOString(),
    modified_at: iso(p.modifiedAt),
    amount: p.amount,
    currency: p.currency,
    state: p.state,
    type: p.type,
    refunded_at: iso(p.refundedAt),
    scheduled_payout_at: iso(p.scheduledPayoutAt),
    issue: {
      id: p.issueId,
      platform: 'github',
      number: p.issueNumber,
      title: p.issueTitle,
      body: null,
      comments: null,
      labels: [],
      author: null,
      assignees: null,
      reactions: null,
      state: 'open',
      issue_closed_at: null,
      issue_modified_at: null,
      issue_created_at: p.createdAt.toISOString(),
      needs_confirmation_solved: false,
      confirmed_solved_at: null,
      funding: { funding_goal: null, pledges_sum: { currency: p.currency, amount: pledgesSum } },
      repository: serializeRepository(p.repository),
      upfront_split_to_contributors: null,
      pledge_badge_currently_embedded: false,
      badge_custom_content: null,
    },
    pledger,
    hosted_invoice_url: p.hostedInvoiceUrl ?? null,
    authed_can_admin_sender: false,
    authed_can_admin_received: true,
    created_by: null,
  };
}
