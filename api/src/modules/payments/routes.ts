/** Public sandbox endpoint: test card number → confirmation token, for the hosted checkout page. */
import { z } from 'zod/v4';
import { ResourceNotFound, fieldError } from '../../kit/errors.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { TEST_CARDS, luhnValid } from './cards.ts';
import { createSandboxConfirmationToken } from './sandbox.ts';

export const routes: RouteSpec[] = [
  route({
    method: 'post',
    path: '/v1/sandbox/confirmation-tokens',
    summary: 'Sandbox only: turn a Stripe test card number into a single-use confirmation token',
    tags: ['sandbox'],
    auth: 'public',
    body: z.object({
      card_number: z.string().transform((s) => s.replace(/[\s-]/g, '')),
      exp_month: z.number().int().min(1).max(12),
      exp_year: z.number().int().min(2000).max(2100),
      cvc: z.string().regex(/^\d{3,4}$/, { message: "Your card's security code is invalid." }),
    }),
    status: 201,
    response: z.object({
      id: z.string(),
      card: z.object({ brand: z.string(), last4: z.string(), exp_month: z.number(), exp_year: z.number() }),
    }),
    async handler({ body, em, deps }) {
      // Only the sandbox processor knows these tokens; with Stripe the page tokenizes through Stripe.js.
      if (deps.cfg.PAYMENT_PROCESSOR !== 'sandbox') throw ResourceNotFound();
      if (!luhnValid(body.card_number)) throw fieldError(['body', 'card_number'], 'Your card number is invalid.');
      const now = new Date();
      const expired =
        body.exp_year < now.getUTCFullYear() || (body.exp_year === now.getUTCFullYear() && body.exp_month < now.getUTCMonth() + 1);
      if (expired) throw fieldError(['body', 'exp_year'], "Your card's expiration date is in the past.");
      const token = await createSandboxConfirmationToken(em, {
        number: body.card_number,
        expMonth: body.exp_month,
        expYear: body.exp_year,
        outcome: TEST_CARDS[body.card_number] ?? 'test_mode_live_card',
      });
      return {
        id: token.id,
        card: { brand: token.brand, last4: token.last4, exp_month: token.expMonth, exp_year: token.expYear },
      };
    },
  }),
];
