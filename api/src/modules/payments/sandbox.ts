/**
 * The sandbox processor: Stripe's test mode, built in. Confirmation tokens (`tok_visa`, … or ones made
 * from test card numbers), saved cards, on- and off-session charges and refunds, all persisted so
 * renewals and refunds work days later. Each call runs in its own transaction, like a remote API.
 */
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { randomToken } from '../../kit/crypto.ts';
import type { EntityManager } from '../../kit/db.ts';
import { DECLINES, TEST_TOKENS, cardBrand } from './cards.ts';
import type { ChargeResult, PaymentProcessor, ProcessorPaymentMethod } from './processor.ts';
import { ProcessorError } from './processor.ts';
import {
  SandboxCharge,
  SandboxConfirmationToken,
  SandboxCustomer,
  SandboxPaymentMethod,
  SandboxRefund,
  type CardOutcome,
} from './sandbox-entities.ts';

const id = (prefix: string) => `${prefix}_${randomToken('', 18)}`;

interface Card {
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  outcome: CardOutcome;
}

function expiryOf(now = new Date()) {
  return { expMonth: 12, expYear: now.getUTCFullYear() + 3 };
}

async function cardFromToken(em: EntityManager, tokenId: string): Promise<Card> {
  const fixed = TEST_TOKENS[tokenId];
  if (fixed) return { ...fixed, ...expiryOf() };
  const token = await em.findOne(SandboxConfirmationToken, { id: tokenId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!token) throw new ProcessorError(`No such confirmation token: '${tokenId}'`, 'resource_missing');
  if (token.usedAt) throw new ProcessorError('This confirmation token has already been used.', 'token_already_used');
  token.usedAt = new Date();
  return token;
}

function pmView(pm: { id: string; brand: string; last4: string; expMonth: number; expYear: number }): ProcessorPaymentMethod {
  return { id: pm.id, brand: pm.brand, last4: pm.last4, expMonth: pm.expMonth, expYear: pm.expYear, wallet: null };
}

function chargeView(charge: SandboxCharge, pm: ProcessorPaymentMethod): ChargeResult {
  if (charge.status === 'succeeded') return { status: 'succeeded', chargeId: charge.id, paymentMethod: pm };
  return {
    status: 'declined',
    chargeId: charge.id,
    code: charge.failureCode ?? 'card_declined',
    declineCode: charge.declineCode ?? 'generic_decline',
    message: charge.failureMessage ?? 'Your card was declined.',
  };
}

/** The outcome of charging a card with this outcome: saved "charge_fails" cards attach but never pay. */
function chargeOutcome(outcome: CardOutcome) {
  return outcome === 'succeed' ? null : DECLINES[outcome];
}

/**
 * `orm` may be a factory: the configured processor gets its own small connection pool, as a remote
 * service would, so callers holding a transaction while they charge can never starve it.
 */
export function createSandboxProcessor(orm: MikroORM | (() => Promise<MikroORM>)): PaymentProcessor {
  const fork = async () => (typeof orm === 'function' ? await orm() : orm).em.fork();
  /**
   * Runs `fn` in a transaction; a repeat of an idempotency key already used returns the stored result
   * instead (as Stripe does). Optimistic: a new key, the usual case, costs no read first; a repeat is
   * recognised when its insert violates the key's unique constraint, or when `fn` refuses it (the
   * charge is fully refunded, the single-use token spent, ...) and a stored result exists.
   */
  async function idempotent<T>(
    fn: (em: EntityManager) => Promise<T>,
    replay: (em: EntityManager) => Promise<T | null>,
    opts: { singleStatement?: boolean } = {},
  ): Promise<T> {
    try {
      const em = await fork();
      return await (opts.singleStatement ? fn(em) : em.transactional((tx) => fn(tx)));
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException || err instanceof ProcessorError) {
        const again = await replay(await fork());
        if (again) return again;
      }
      throw err;
    }
  }

  async function replayCharge(em: EntityManager, idempotencyKey: string): Promise<ChargeResult | null> {
    const charge = await em.findOne(SandboxCharge, { idempotencyKey });
    if (!charge) return null;
    const pm = charge.paymentMethodId ? await em.findOne(SandboxPaymentMethod, { id: charge.paymentMethodId }) : null;
    return chargeView(charge, pm ? pmView(pm) : { id: '', brand: 'unknown', last4: '', expMonth: 0, expYear: 0, wallet: null });
  }

  async function charge(
    em: EntityManager,
    input: { amount: number; currency: string; customerId: string; idempotencyKey: string; metadata?: Record<string, string> },
    pm: SandboxPaymentMethod | (Card & { id: null }),
  ): Promise<ChargeResult> {
    if (!Number.isInteger(input.amount) || input.amount <= 0) throw new ProcessorError('Amount must be a positive integer', 'amount_too_small');
    const decline = chargeOutcome(pm.outcome);
    const row = em.create(SandboxCharge, {
      id: id('ch'),
      customerId: input.customerId,
      paymentMethodId: pm.id,
      amount: input.amount,
      currency: input.currency.toLowerCase(),
      status: decline ? 'failed' : 'succeeded',
      failureCode: decline?.code ?? null,
      declineCode: decline?.declineCode ?? null,
      failureMessage: decline?.message ?? null,
      refundedAmount: 0,
      idempotencyKey: input.idempotencyKey,
      metadata: input.metadata ?? {},
    });
    await em.flush();
    return chargeView(row, pmView({ ...pm, id: pm.id ?? '' }));
  }

  /** `charge` for a card that is not saved, as one statement: nothing is written when the customer does not exist. */
  async function chargeInOneStatement(
    em: EntityManager,
    input: { amount: number; currency: string; processorCustomerId: string; idempotencyKey: string; metadata?: Record<string, string> },
    card: Card,
  ): Promise<ChargeResult> {
    if (!Number.isInteger(input.amount) || input.amount <= 0) throw new ProcessorError('Amount must be a positive integer', 'amount_too_small');
    const decline = chargeOutcome(card.outcome);
    const chargeId = id('ch');
    const rows = await em.execute<{ id: string }[]>(
      `insert into "sandbox_charges" ("id", "customer_id", "payment_method_id", "amount", "currency", "status", "failure_code", "decline_code",
         "failure_message", "refunded_amount", "idempotency_key", "metadata", "created_at")
       select ?, ?, null, ?, ?, ?, ?, ?, ?, 0, ?, ?::jsonb, now() where exists (select 1 from "sandbox_customers" where "id" = ?)
       returning "id"`,
      [
        chargeId,
        input.processorCustomerId,
        input.amount,
        input.currency.toLowerCase(),
        decline ? 'failed' : 'succeeded',
        decline?.code ?? null,
        decline?.declineCode ?? null,
        decline?.message ?? null,
        input.idempotencyKey,
        JSON.stringify(input.metadata ?? {}),
        input.processorCustomerId,
      ],
    );
    if (!rows.length) throw new ProcessorError(`No such customer: '${input.processorCustomerId}'`, 'resource_missing');
    if (decline) return { status: 'declined', chargeId, code: decline.code, declineCode: decline.declineCode, message: decline.message };
    return { status: 'succeeded', chargeId, paymentMethod: pmView({ id: '', ...card }) };
  }

  async function requireCustomer(em: EntityManager, customerId: string) {
    if (!(await em.count(SandboxCustomer, { id: customerId }))) {
      throw new ProcessorError(`No such customer: '${customerId}'`, 'resource_missing');
    }
  }

  return {
    name: 'sandbox',

    async createCustomer({ email, name, idempotencyKey }) {
      return idempotent(
        async (em) => {
          // One INSERT (no transaction around a single statement).
          const customerId = id('cus');
          await em.insert(SandboxCustomer, { id: customerId, email, name: name ?? null, idempotencyKey, createdAt: new Date() });
          return { id: customerId };
        },
        async (em) => {
          const c = await em.findOne(SandboxCustomer, { idempotencyKey });
          return c ? { id: c.id } : null;
        },
        { singleStatement: true },
      );
    },

    async confirmPayment(input) {
      const fixed = Object.hasOwn(TEST_TOKENS, input.confirmationTokenId) ? TEST_TOKENS[input.confirmationTokenId] : undefined;
      if (fixed && !input.savePaymentMethod) {
        // A test token and nothing to save: the charge is one INSERT that also checks the customer exists.
        return idempotent(
          (em) => chargeInOneStatement(em, input, { ...fixed, ...expiryOf() }),
          (em) => replayCharge(em, input.idempotencyKey),
          { singleStatement: true },
        );
      }
      return idempotent(
        async (em) => {
          await requireCustomer(em, input.processorCustomerId);
          const card = await cardFromToken(em, input.confirmationTokenId);
          // Declined at the card (not at a later charge): nothing is saved.
          const saveable = card.outcome === 'succeed' || card.outcome === 'charge_fails';
          const pm =
            input.savePaymentMethod && saveable
              ? em.create(SandboxPaymentMethod, {
                  id: id('pm'),
                  customerId: input.processorCustomerId,
                  brand: card.brand,
                  last4: card.last4,
                  expMonth: card.expMonth,
                  expYear: card.expYear,
                  outcome: card.outcome,
                  idempotencyKey: null,
                  detachedAt: null,
                })
              : ({ ...card, id: null } as Card & { id: null });
          return charge(em, { ...input, customerId: input.processorCustomerId }, pm);
        },
        (em) => replayCharge(em, input.idempotencyKey),
      );
    },

    async setupPaymentMethod({ confirmationTokenId, processorCustomerId, idempotencyKey }) {
      return idempotent(
        async (em) => {
          await requireCustomer(em, processorCustomerId);
          const card = await cardFromToken(em, confirmationTokenId);
          const decline = card.outcome === 'charge_fails' ? null : chargeOutcome(card.outcome);
          if (decline) return { status: 'declined' as const, chargeId: null, ...decline };
          const pm = em.create(SandboxPaymentMethod, {
            id: id('pm'),
            customerId: processorCustomerId,
            brand: card.brand,
            last4: card.last4,
            expMonth: card.expMonth,
            expYear: card.expYear,
            outcome: card.outcome,
            idempotencyKey,
            detachedAt: null,
          });
          await em.flush();
          return { status: 'succeeded' as const, paymentMethod: pmView(pm) };
        },
        async (em) => {
          const pm = await em.findOne(SandboxPaymentMethod, { idempotencyKey });
          return pm ? { status: 'succeeded' as const, paymentMethod: pmView(pm) } : null;
        },
      );
    },

    async chargeOffSession(input) {
      return idempotent(
        async (em) => {
          const pm = await em.findOne(SandboxPaymentMethod, { id: input.paymentMethodId, customerId: input.processorCustomerId });
          if (!pm || pm.detachedAt) throw new ProcessorError(`No such payment method: '${input.paymentMethodId}'`, 'resource_missing');
          return charge(em, { ...input, customerId: input.processorCustomerId }, pm);
        },
        (em) => replayCharge(em, input.idempotencyKey),
      );
    },

    async refund({ chargeId, amount, idempotencyKey }) {
      return idempotent(
        async (em) => {
          const ch = await em.findOne(SandboxCharge, { id: chargeId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
          if (!ch || ch.status !== 'succeeded') throw new ProcessorError(`No such charge: '${chargeId}'`, 'resource_missing');
          if (!Number.isInteger(amount) || amount <= 0) throw new ProcessorError('Refund amount must be a positive integer', 'amount_too_small');
          if (ch.refundedAmount + amount > ch.amount) {
            throw new ProcessorError(
              `Refund amount (${amount}) is greater than unrefunded amount on charge (${ch.amount - ch.refundedAmount})`,
              'amount_too_large',
            );
          }
          ch.refundedAmount += amount;
          const r = em.create(SandboxRefund, { id: id('re'), chargeId, amount, idempotencyKey });
          await em.flush();
          return { refundId: r.id, status: 'succeeded' as const };
        },
        async (em) => {
          const r = await em.findOne(SandboxRefund, { idempotencyKey });
          return r ? { refundId: r.id, status: 'succeeded' as const } : null;
        },
      );
    },

    async detachPaymentMethod(paymentMethodId) {
      await (await fork()).nativeUpdate(SandboxPaymentMethod, { id: paymentMethodId, detachedAt: null }, { detachedAt: new Date() });
    },
  };
}

/** Turns a test card number into a single-use confirmation token (what the hosted checkout page calls). */
export async function createSandboxConfirmationToken(
  em: EntityManager,
  card: { number: string; expMonth: number; expYear: number; outcome: CardOutcome },
): Promise<SandboxConfirmationToken> {
  const token = em.create(SandboxConfirmationToken, {
    id: id('ctoken'),
    brand: cardBrand(card.number),
    last4: card.number.slice(-4),
    expMonth: card.expMonth,
    expYear: card.expYear,
    outcome: card.outcome,
    usedAt: null,
  });
  await em.flush();
  return token;
}

/**
 * Sandbox-only control: a saved card that starts declining (its later off-session charges fail, as
 * Stripe's `4000 0000 0000 0341` card does), or works again. For tests and demos of dunning on a
 * card that paid at checkout.
 */
export async function setSandboxCardOutcome(em: EntityManager, paymentMethodId: string, outcome: 'succeed' | 'charge_fails'): Promise<boolean> {
  const updated = await em.nativeUpdate(SandboxPaymentMethod, { id: paymentMethodId }, { outcome });
  return updated > 0;
}
