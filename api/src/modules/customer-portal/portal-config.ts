/**
 * GET /v1/customer-portal/config (no credentials): what the hosted checkout and the portal need to
 * know about this installation: the card processor (`sandbox`: the test card form; `stripe`: Stripe's
 * Payment Element with the publishable key) and the platforms a customer can connect an account of.
 */
import { z } from 'zod/v4';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { connectablePlatforms, OAUTH_PLATFORMS } from './oauth-accounts.ts';

export const portalConfigSchema = z.object({
  payment_processor: z.enum(['sandbox', 'stripe']),
  /** Stripe.js key (`pk_…`) with the stripe processor; null otherwise or when not configured. */
  stripe_publishable_key: z.string().nullable(),
  oauth_platforms: z.array(z.enum(OAUTH_PLATFORMS)),
});

export const routes: RouteSpec[] = [
  route({
    method: 'get',
    path: '/v1/customer-portal/config',
    summary: 'The checkout and portal configuration of this installation (card processor, connectable platforms)',
    tags: ['customer-portal'],
    auth: 'public',
    response: portalConfigSchema,
    async handler({ deps, res }) {
      res.setHeader('Cache-Control', 'public, max-age=60');
      const stripe = deps.cfg.PAYMENT_PROCESSOR === 'stripe';
      return {
        payment_processor: deps.cfg.PAYMENT_PROCESSOR,
        stripe_publishable_key: stripe ? (deps.cfg.STRIPE_PUBLISHABLE_KEY ?? null) : null,
        oauth_platforms: connectablePlatforms(deps.cfg),
      };
    },
  }),
];
