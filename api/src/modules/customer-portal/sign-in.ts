/**
 * Passwordless sign-in to the customer portal, as Polar has it:
 * - `POST /v1/customer-portal/customer-session/request` `{email, organization_id}` mails a one-time
 *   code to the organization's customer with that email; 202 whether or not there is one.
 * - `POST /v1/customer-portal/customer-session/authenticate` `{code}` → `{token}`: a full customer
 *   session (`polar_cst_…`), the code deleted in the same statement that finds it (single use).
 * Codes: 8 characters from a 32-letter alphabet, valid 15 minutes, stored as an HMAC under the server
 * secret, never logged. Both calls are rate limited per IP, and requests also per email address,
 * whatever RATE_LIMIT_ENABLED says (the counters are the auth rate limiter's `rate_limits` rows).
 */
import { randomInt } from 'node:crypto';
import { z } from 'zod/v4';
import type { Config } from '../../config.ts';
import { inTransaction, type EntityManager } from '../../kit/db.ts';
import { hmacBase64 } from '../../kit/crypto.ts';
import { ApiError } from '../../kit/errors.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { hit } from '../../auth/rate-limit.ts';
import { Customer } from '../customers/entities.ts';
import { customerEmailSchema } from '../customers/schemas.ts';
import { CustomerSessionCode } from './sign-in-entities.ts';
import { redeemSignInCode } from './service.ts';

export const SIGN_IN_CODE_TTL_MS = 15 * 60 * 1000;
export const SIGN_IN_CODE_LENGTH = 8;
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'; // no 0/O, 1/I

/** Limits: [max, window seconds]. */
export const SIGN_IN_LIMITS = {
  requestPerEmail: [5, 15 * 60],
  requestPerIp: [30, 15 * 60],
  authenticatePerIp: [30, 15 * 60],
} as const;

export function newSignInCode(): string {
  let code = '';
  for (let i = 0; i < SIGN_IN_CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/** What the customer typed, in the stored form: spaces and dashes dropped, upper-cased. */
export function normalizeSignInCode(raw: string): string {
  return raw.replace(/[\s-]/g, '').toUpperCase();
}

const codeHash = (cfg: Pick<Config, 'SECRET'>, code: string) => hmacBase64(cfg.SECRET, `customer-session-code:${code}`);

const TooManyRequests = () =>
  new ApiError(429, 'TooManyRequests', 'Too many attempts. Wait a few minutes and try again.');

async function limit(em: EntityManager, res: { setHeader(k: string, v: string): unknown }, key: string, [max, windowSeconds]: readonly [number, number]) {
  const retryAfter = await hit(em, key, max, windowSeconds);
  if (retryAfter !== null) {
    res.setHeader('Retry-After', String(retryAfter));
    throw TooManyRequests();
  }
}

const requestSchema = z.object({ email: customerEmailSchema, organization_id: z.uuid() });
const authenticateSchema = z.object({ code: z.string().trim().min(1).max(64) });

export const routes: RouteSpec[] = [
  route({
    method: 'post',
    path: '/v1/customer-portal/customer-session/request',
    summary: 'Mail a one-time sign-in code to a customer of the organization (202 whether or not the email is known)',
    tags: ['customer-portal'],
    auth: 'public',
    body: requestSchema,
    status: 202,
    async handler({ body, em, deps, req, res }) {
      await limit(em, res, `customer-session-request-ip|${req.ip ?? 'unknown'}`, SIGN_IN_LIMITS.requestPerIp);
      await limit(em, res, `customer-session-request-email|${body.organization_id}|${body.email}`, SIGN_IN_LIMITS.requestPerEmail);
      const { result, afterCommit } = await inTransaction(em, async (tx, after) => {
        const customer = await tx.findOne(
          Customer,
          { email: body.email, organization: body.organization_id, deletedAt: null },
          { populate: ['organization'] },
        );
        if (!customer) return null;
        // One live code per customer: a new request replaces the previous one.
        await tx.nativeDelete(CustomerSessionCode, { customer });
        const code = newSignInCode();
        tx.create(CustomerSessionCode, {
          customer,
          codeHash: codeHash(deps.cfg, code),
          expiresAt: new Date(Date.now() + SIGN_IN_CODE_TTL_MS),
        });
        const org = customer.organization;
        const portal = `${deps.cfg.PUBLIC_URL.replace(/\/+$/, '')}/portal/${encodeURIComponent(org.slug)}`;
        after(async () => {
          // In the background: the answer must not wait for (or reveal) delivery.
          deps.mailer
            .send({
              to: customer.email,
              subject: `Your sign-in code for ${org.name}: ${code}`,
              text:
                `Your code to sign in to the ${org.name} customer portal is:\n\n    ${code}\n\n` +
                `Enter it at ${portal}. It works once and expires in 15 minutes.\n` +
                `If you did not ask for it, you can ignore this email.\n`,
            })
            .catch((err: unknown) => deps.log.error({ err, requestId: req.id }, 'customer sign-in mail failed'));
        });
        return null;
      });
      await afterCommit();
      return result ?? {};
    },
  }),
  route({
    method: 'post',
    path: '/v1/customer-portal/customer-session/authenticate',
    summary: 'Exchange a one-time sign-in code for a customer session token',
    tags: ['customer-portal'],
    auth: 'public',
    errors: [401],
    body: authenticateSchema,
    status: 200,
    response: z.object({ token: z.string() }),
    async handler({ body, em, deps, req, res }) {
      await limit(em, res, `customer-session-authenticate-ip|${req.ip ?? 'unknown'}`, SIGN_IN_LIMITS.authenticatePerIp);
      const hash = codeHash(deps.cfg, normalizeSignInCode(body.code));
      const { result } = await inTransaction(em, (tx) => redeemSignInCode(tx, hash));
      if (!result) throw new ApiError(401, 'Unauthorized', 'This code is invalid or has expired. Request a new one.');
      return { token: result };
    },
  }),
];
