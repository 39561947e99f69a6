/**
 * Legacy pledges (Polar's issue funding): money pledged towards a GitHub issue of a repository an
 * organization receives pledges for. Kept small and separate from the billing path: a pledge is a
 * record with a state and a type; no processor is involved (service.ts has the transitions).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';
import { Repository } from '../repositories/entities.ts';

export const PLEDGE_STATES = ['initiated', 'created', 'pending', 'refunded', 'disputed', 'charge_disputed', 'cancelled'] as const;
export type PledgeState = (typeof PLEDGE_STATES)[number];
export const PLEDGE_TYPES = ['pay_upfront', 'pay_on_completion', 'pay_directly'] as const;
export type PledgeType = (typeof PLEDGE_TYPES)[number];

export const Pledge = defineEntity({
  name: 'Pledge',
  tableName: 'pledges',
  properties: {
    ...baseProperties,
    /** The organization receiving the pledge (the repository's). */
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    repository: () => p.manyToOne(Repository).deleteRule('cascade').index(),
    /** The pledged issue: one id per (repository, number), shared by its pledges. */
    issueId: p.uuid(),
    issueNumber: p.integer(),
    issueTitle: p.string(),
    /** Minor units of `currency`. */
    amount: p.integer(),
    currency: p.string().length(3).default('usd'),
    state: p.enum(PLEDGE_STATES),
    type: p.enum(PLEDGE_TYPES),
    pledgerName: p.string(),
    pledgerGithubUsername: p.string().nullable(),
    pledgerAvatarUrl: p.text().nullable(),
    refundedAt: p.datetime().nullable(),
    scheduledPayoutAt: p.datetime().nullable(),
    hostedInvoiceUrl: p.text().nullable(),
  },
  indexes: [{ properties: ['repository', 'issueNumber'] }],
});
export type Pledge = InferEntity<typeof Pledge>;
