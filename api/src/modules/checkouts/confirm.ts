/**
 * Checkout confirmation (`POST /v1/checkouts/client/{client_secret}/confirm`) in three short steps,
 * so that no database connection is held while the processor is called:
 *
 * 1. Prepare (one short transaction, checkout row locked FOR UPDATE NOWAIT: a concurrent confirm that
 *    finds it locked gets 409): apply the buyer's last changes, check what the checkout needs, and
 *    reserve the discount redemption with one atomic conditional UPDATE of `redemptions_count` (no
 *    row lock held beyond this transaction), recorded as the checkout's `discount_redemptions` row.
 *    A reservation is per checkout: a retry reuses it.
 * 2. Charge, outside any transaction, recorded first as a `checkout_charge_attempts` row (pending
 *    until its outcome is recorded; the sweeper settles one a dead process left, `settleAbandonedCharges`).
 *    A decline releases the reservation (PaymentError, checkout stays `open`, no customer written).
 * 3. Commit (one short transaction, checkout row locked): if the checkout is still open and unchanged,
 *    find or create the customer, mark it `confirmed` with the charge, and record the
 *    `checkout-confirm:<id>` workflow start durably (kit/workflow-starts.ts) in the same transaction.
 *    When another confirm won meanwhile with the same charge (same idempotency key) this one is a
 *    403 NotOpenCheckout; with a different charge, this one's charge is refunded first.
 *
 * Charge idempotency: the key is `checkout:<id>:charge:<token>` (plus `:<n>` once n charges of the
 * checkout were refunded without an order, `chargeKey`), so concurrent confirms with one token make one
 * charge, and a crash between the charge and step 3 is healed by the buyer's retry, which replays that
 * charge. The token is part of the key because a declined attempt is replayed for its key too (as
 * Stripe does): the buyer's next card must get a fresh attempt; the attempt number is, because a
 * refunded charge must not be replayed as the payment of a later confirmation.
 *
 * The customer (`findCustomer`) is the checkout's own when it has one, else the organization's
 * customer with the buyer's email, else a new one; a unique violation while creating it (another
 * checkout created the same customer meanwhile) retries step 3 once, then refunds.
 */
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config.ts';
import type { Logger } from '../../kit/logger.ts';
import { inTransaction, type EntityManager } from '../../kit/db.ts';
import { ApiError, ResourceAlreadyExists, ResourceNotFound } from '../../kit/errors.ts';
import { Customer } from '../customers/entities.ts';
import { emitCustomerEvent } from '../customers/service.ts';
import { createCustomerSession } from '../customer-sessions/service.ts';
import { Order } from '../orders/entities.ts';
import type { PaymentProcessor } from '../payments/index.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { redeemTrial, TrialAlreadyRedeemed, trialLostAtConfirm } from '../trials/index.ts';
import { Checkout, DiscountRedemption } from './entities.ts';
import { effectiveStatus, serializeCheckout, serializeCheckoutWithProducts, type CheckoutConfirm, type CheckoutProductsRead } from './schemas.ts';
import { CHECKOUT_POPULATE } from './schemas.ts';
import { ensureCheckoutRules } from './loaded.ts';
import { CHECKOUT_RULES_POPULATE, checkoutProductsJson } from './product-reads.ts';
import { CHECKOUT_SECRET_PREFIX, NotOpenCheckout, updateCheckout } from './service.ts';
import { assertNoActiveSubscription, findCustomer, findOrCreateCustomer, requireConfirmFields } from './buyer.ts';
import { chargeKey, refundUnfulfilledCharge, settleAttempt } from './charge-attempts.ts';
import { releaseRedemption, reserveRedemption } from './redemptions.ts';
import { prepareCommon, type FastPrepared } from './confirm-fast.ts';
import { withoutTrial } from './without-trial.ts';
import { charge, type Charged, type ChargeInput } from './confirm-charge.ts';
import { commitCommon, type ConfirmStart } from './confirm-commit-sql.ts';
import { startWorkflow } from '../../kit/workflow-starts.ts';


// The schemas live in schemas.ts (no service imports) so the routes can load whatever imports this file first.
export { checkoutConfirmSchema, checkoutConfirmedSchema, type CheckoutConfirm } from './schemas.ts';
// The sweeper settles abandoned charges through this module (charge-attempts.ts).
export { settleAbandonedCharges } from './charge-attempts.ts';
export { AlreadyActiveSubscriptionError } from './buyer.ts';

/** PostgreSQL's lock_not_available (FOR UPDATE NOWAIT on a row another transaction holds). */
function isLockNotAvailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  return e?.code === '55P03' || /could not obtain lock/i.test(String(e?.message ?? ''));
}

async function lockCheckoutBySecret(em: EntityManager, clientSecret: string): Promise<Checkout> {
  let c: Checkout | null = null;
  if (clientSecret.startsWith(CHECKOUT_SECRET_PREFIX)) {
    try {
      c = await em.findOne(Checkout, { clientSecret }, { lockMode: LockMode.PESSIMISTIC_WRITE_OR_FAIL });
    } catch (err) {
      if (isLockNotAvailable(err)) throw ResourceAlreadyExists('This checkout is already being confirmed.');
      throw err;
    }
  }
  if (!c || effectiveStatus(c) === 'expired') throw ResourceNotFound('Checkout not found');
  await em.populate(c, CHECKOUT_RULES_POPULATE);
  return c;
}

export interface ConfirmDeps {
  cfg: Config;
  orm: MikroORM;
  processor: PaymentProcessor;
  log?: Pick<Logger, 'warn'>;
}

/** What step 1 hands to the charge and to step 3. */
interface Prepared extends ChargeInput {
  changed: boolean;
  discountId: string | null;
  /** Step 1 found the buyer's customer (else step 3 creates one). */
  customerFound: boolean;
  /**
   * Set by the common path (confirm-fast.ts): the checkout's products, in order. Step 3 then reads
   * only the to-one rows that path mapped (product, price, organization), not the rules' graph.
   */
  productIds: string[] | null;
  /** What the common path read (confirm-fast.ts): step 3 may then be one statement (confirm-commit-sql.ts). */
  fast: FastPrepared | null;
}

/** What step 1 of the common path hands on. */
function preparedCommon(f: FastPrepared, input: CheckoutConfirm): Prepared {
  const c = f.checkout;
  return {
    changed: f.changed,
    checkoutId: c.id,
    tokenId: input.confirmation_token_id ?? null,
    email: c.customerEmail!,
    name: f.customer?.name ?? c.customerName ?? null,
    processorCustomerId: f.customer?.processorCustomerId ?? null,
    totalAmount: c.totalAmount ?? null,
    currency: c.currency ?? null,
    paymentRequired: c.isPaymentRequired,
    setupRequired: c.isPaymentSetupRequired,
    recurring: c.product.recurringInterval != null,
    discountId: null,
    chargeAttempt: c.chargeAttempt,
    customerFound: f.customer != null,
    productIds: f.productIds,
    fast: f,
  };
}

/** Step 1: see the file comment. */
async function prepare(em: EntityManager, clientSecret: string, input: CheckoutConfirm): Promise<Prepared> {
  // The common checkout in one read and one guarded write, no transaction (confirm-fast.ts).
  const f = await prepareCommon(em, clientSecret, input);
  if (f) return preparedCommon(f, input);
  return em.transactional(async (tx) => {
    const c = await lockCheckoutBySecret(tx, clientSecret);
    if (c.status !== 'open') throw NotOpenCheckout(`Checkout is ${effectiveStatus(c)}.`);
    // Reopened after a failed fulfilment that had already written its (now refunded) order: one order
    // per checkout, so a new payment needs a new checkout.
    if (await tx.count(Order, { checkout: c.id })) throw NotOpenCheckout('This checkout was refunded; start a new checkout.');
    const { confirmation_token_id: tokenId, ...update } = input;
    const modifiedBefore = c.modifiedAt?.getTime() ?? null;
    const trialShown = c.activeTrialInterval != null;
    await updateCheckout(tx, c, update, 'public');
    // The buyer saw a trial that another checkout of theirs redeemed meanwhile: refused, not charged.
    if (await trialLostAtConfirm(tx, c, trialShown)) throw TrialAlreadyRedeemed();
    requireConfirmFields(c, tokenId);
    const customer = await findCustomer(tx, c);
    await assertNoActiveSubscription(tx, c, customer);
    await reserveRedemption(tx, c);
    await tx.flush();
    return {
      // The buyer's last changes were saved (modified_at moved): a decline must still announce them.
      changed: (c.modifiedAt?.getTime() ?? null) !== modifiedBefore,
      checkoutId: c.id,
      tokenId: tokenId ?? null,
      email: c.customerEmail!,
      name: customer?.name ?? c.customerName ?? null,
      processorCustomerId: customer?.processorCustomerId ?? null,
      totalAmount: c.totalAmount ?? null,
      currency: c.currency ?? null,
      paymentRequired: c.isPaymentRequired,
      setupRequired: c.isPaymentSetupRequired,
      recurring: c.product.recurringInterval != null,
      discountId: c.discount && c.isDiscountApplicable ? c.discount.id : null,
      chargeAttempt: c.chargeAttempt,
      customerFound: customer != null,
      productIds: null,
      fast: null,
    };
  });
}

/** A confirmed checkout, its products' read models, the customer session token (shown once) and the customer it created. */
export interface Confirmed {
  checkout: Checkout;
  products: CheckoutProductsRead;
  customerSessionToken: string;
  customerCreated: Customer | null;
}

/** Thrown inside step 3 when the confirmation must not happen; `refund` when our charge must be given back. */
class Abort extends Error {
  constructor(
    readonly error: unknown,
    readonly refund: boolean,
  ) {
    super('confirmation aborted');
  }
}

type InCommit = (tx: EntityManager, c: Checkout, after: (fn: () => Promise<unknown>) => void) => void;

/**
 * Confirms the checkout (see the file comment). `inCommit` runs inside step 3's transaction with the
 * confirmed checkout, e.g. to record the fulfilment workflow start; `after` callbacks it registers
 * run once that transaction committed. Given as the workflow start itself (`ConfirmStart`), step 3 of
 * the common checkout may be one statement (confirm-commit-sql.ts). Returns the confirmed checkout and
 * the customer session token (shown once).
 */
export async function confirmCheckout(
  em: EntityManager,
  deps: ConfirmDeps,
  clientSecret: string,
  input: CheckoutConfirm,
  commit: InCommit | ConfirmStart = () => {},
): Promise<Confirmed> {
  const start = typeof commit === 'function' ? null : commit;
  const inCommit: InCommit = start ? (tx, c, after) => startWorkflow(tx, after, start.deps, start.workflow(c)) : (commit as InCommit);
  const p = await prepare(em, clientSecret, input).catch(async (err: unknown) => {
    if (err instanceof ApiError && err.error === 'TrialAlreadyRedeemed') {
      // The buyer's changes (their email: whose trial it was) are kept with the recomputed checkout.
      const { confirmation_token_id: _token, ...update } = input;
      await withoutTrial(em, deps, clientSecret, 'secret', update);
    }
    throw err;
  });
  const processor = deps.processor;
  let charged: Charged;
  try {
    charged = await charge(em, processor, p);
  } catch (err) {
    // A decline keeps the checkout open: give the reservation back, and announce the buyer's changes
    // that step 1 saved (on success step 3's checkout.updated carries them).
    await em.fork().transactional(async (tx) => {
      await releaseRedemption(tx, p.checkoutId);
      if (!p.changed) return;
      const c = await tx.findOneOrFail(Checkout, { id: p.checkoutId }, { populate: CHECKOUT_POPULATE });
      emitEvent(tx, c.organization.id, 'checkout.updated', serializeCheckout(c, deps.cfg.PUBLIC_URL));
      await tx.flush();
    });
    throw err;
  }

  // Step 3. A unique violation means another checkout created this buyer's customer meanwhile: the
  // second attempt finds it. Should it happen again, the charge is refunded rather than left behind.
  for (let attempt = 1; ; attempt++) {
    try {
      if (attempt === 1 && start && p.fast) {
        const f = p.fast;
        const attemptKey = charged.chargeId && p.tokenId ? chargeKey(p.checkoutId, p.tokenId, p.chargeAttempt) : null;
        const done = await commitCommon(em, deps.cfg.PUBLIC_URL, { ...f, ...charged, attemptKey }, start);
        if (done && done !== 'raced') return done;
        // Another checkout created the buyer's customer meanwhile: the ORM path looks it up (its second attempt).
        if (done === 'raced') attempt++;
      }
      return await commitConfirmation(em, deps, p, charged, inCommit, attempt === 1);
    } catch (err) {
      const raced = err instanceof UniqueConstraintViolationException;
      if (raced && attempt < 2) continue;
      const abort = raced ? new Abort(ResourceAlreadyExists('A concurrent checkout is creating this customer; retry.'), charged.chargeId != null) : err;
      const refund = {
        checkoutId: p.checkoutId,
        chargeId: charged.chargeId!,
        amount: p.totalAmount!,
        attemptKey: p.tokenId ? chargeKey(p.checkoutId, p.tokenId, p.chargeAttempt) : undefined,
      };
      if (!(abort instanceof Abort)) {
        // Anything else (the database failed, a bug): the charge must not stay without an order. But
        // the commit may have happened all the same (a connection lost after COMMIT), so the money goes
        // back only if the checkout is seen not to hold this charge; if even that cannot be read, it
        // stays (the buyer's retry with the same token replays it).
        if (charged.chargeId) {
          const held = await em
            .fork()
            .findOne(Checkout, { id: p.checkoutId }, { fields: ['processorChargeId'] })
            .then((c) => c?.processorChargeId === charged.chargeId)
            .catch((err: unknown) => {
              deps.log?.warn({ err, checkoutId: p.checkoutId }, 'charge kept: its checkout could not be read');
              return true;
            });
          if (!held) {
            await refundUnfulfilledCharge(em, processor, refund).catch((refundErr: unknown) => {
              throw new AggregateError([abort, refundErr], 'The confirmation failed and its charge could not be refunded.');
            });
          }
        }
        throw abort;
      }
      if (abort.refund && charged.chargeId) await refundUnfulfilledCharge(em, processor, refund);
      if (abort.error instanceof ApiError && abort.error.error === 'TrialAlreadyRedeemed') {
        await withoutTrial(em, deps, p.checkoutId, 'id', {});
      }
      throw abort.error;
    }
  }
}

/** Step 3's transaction (see the file comment); throws `Abort` when the confirmation must not happen. */
async function commitConfirmation(
  em: EntityManager,
  deps: ConfirmDeps,
  p: Prepared,
  charged: Charged,
  inCommit: (tx: EntityManager, c: Checkout, after: (fn: () => Promise<unknown>) => void) => void,
  firstAttempt: boolean,
): Promise<Confirmed> {
  const { result, afterCommit } = await inTransaction(em, async (tx, after) => {
    const c = await tx.findOne(Checkout, { id: p.checkoutId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!c) throw new Abort(ResourceNotFound('Checkout not found'), charged.chargeId != null);
    // What step 1 loaded is still in this request's identity map: not read again.
    if (!p.productIds) await ensureCheckoutRules(tx, c);
    if (c.status !== 'open') {
      // A concurrent confirm won. With the same charge (same token) it is simply this confirm's outcome.
      throw new Abort(NotOpenCheckout(`Checkout is ${effectiveStatus(c)}.`), charged.chargeId != null && charged.chargeId !== c.processorChargeId);
    }
    if ((c.totalAmount ?? null) !== p.totalAmount || (c.currency ?? null) !== p.currency || c.customerEmail !== p.email) {
      throw new Abort(ResourceAlreadyExists('The checkout changed during confirmation; retry.'), charged.chargeId != null);
    }
    if (p.discountId && !(await tx.count(DiscountRedemption, { checkout: c.id }))) {
      // A concurrent declined attempt released the reservation this one relied on.
      try {
        await reserveRedemption(tx, c);
      } catch (err) {
        throw new Abort(err, charged.chargeId != null);
      }
    }
    let found;
    try {
      // Step 1 found no customer: the first attempt creates it straight away (a customer created
      // meanwhile makes the insert a unique violation, and the second attempt looks it up).
      found = await findOrCreateCustomer(tx, c, { lookup: firstAttempt ? p.customerFound : true });
      await assertNoActiveSubscription(tx, c, found.created ? null : found.customer);
    } catch (err) {
      throw new Abort(err, charged.chargeId != null);
    }
    const { customer, created, updated } = found;
    if (!customer.processorCustomerId && charged.processorCustomerId) customer.processorCustomerId = charged.processorCustomerId;
    c.status = 'confirmed';
    c.customer = customer;
    c.processorChargeId = charged.chargeId;
    // The sweeper may have settled this charge as abandoned (a confirmation stalled past the grace period).
    if (charged.chargeId && p.tokenId && !(await settleAttempt(tx, chargeKey(c.id, p.tokenId, p.chargeAttempt), 'confirmed', charged.chargeId))) {
      throw new Abort(NotOpenCheckout('This payment was given back; please pay again.'), false);
    }
    c.processorPaymentMethod = charged.savedMethod;
    // Checkout-scoped: typing an email proves nothing, so the token reaches only what this checkout bought.
    const { token } = createCustomerSession(tx, customer, { checkout: c });
    await tx.flush();
    // One trial per customer and product, decided by the trial_redemptions unique keys (trials/index.ts).
    if (c.activeTrialInterval && !(await redeemTrial(tx, c, customer.id))) throw new Abort(TrialAlreadyRedeemed(), charged.chargeId != null);
    // The products' read models from PostgreSQL, for the event and the buyer's answer.
    const products = await checkoutProductsJson(tx, c, p.productIds ?? undefined);
    emitEvent(tx, c.organization.id, 'checkout.updated', serializeCheckoutWithProducts(c, deps.cfg.PUBLIC_URL, products));
    if (created) emitCustomerEvent(tx, customer, 'created');
    else if (updated) emitCustomerEvent(tx, customer, 'updated');
    inCommit(tx, c, after);
    await tx.flush();
    return { checkout: c, products, customerSessionToken: token, customerCreated: created ? customer : null };
  });
  await afterCommit();
  return result;
}
