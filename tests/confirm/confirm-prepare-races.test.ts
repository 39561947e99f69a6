/**
 * Step 1 of the common confirmation (checkouts/confirm-fast.ts) runs without a transaction: one read,
 * then the buyer's change written by one `UPDATE` guarded by the row version the read saw. When the
 * checkout is written between the two (here the seller's PATCH, made through the API as soon as the
 * read answered), the confirmation is refused with a 409, writes nothing and charges nothing; the
 * buyer's retry confirms.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutConfirmWorkflowId } from '@emporia/workflows/ids';
import { confirmCheckout, checkoutConfirmSchema } from '../../api/src/modules/checkouts/confirm.ts';
import { confirmFastPathStats } from '../../api/src/modules/checkouts/confirm-fast.ts';
import type { EntityManager } from '../../api/src/kit/db.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { createProduct } from '../checkouts/helpers.ts';
import { buyer, call, confirmSeller, fulfilled, newCheckout, type Seller } from './helpers.ts';

let srv: TestServer;
let s: Seller;

beforeAll(async () => {
  srv = await startTestServer();
  s = await confirmSeller(srv);
});
afterAll(async () => {
  await srv?.close();
});

/** A fresh entity manager that runs `after` once its first statement (step 1's read) has answered. */
function emThat(after: () => Promise<unknown>): EntityManager {
  const real = srv.deps.orm.em.fork();
  let first = true;
  return new Proxy(real, {
    get(target, prop, receiver) {
      if (prop === 'execute') {
        return async (...args: Parameters<EntityManager['execute']>) => {
          const rows = await target.execute(...args);
          if (first) {
            first = false;
            await after();
          }
          return rows;
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

function confirm(em: EntityManager, checkout: { client_secret: string }, email: string) {
  return confirmCheckout(em, srv.deps, checkout.client_secret, checkoutConfirmSchema.parse({ ...buyer(email), confirmation_token_id: 'tok_visa' }), {
    deps: srv.deps,
    workflow: (c) => ({
      workflowType: 'checkoutConfirmWorkflow',
      taskQueue: srv.deps.cfg.TEMPORAL_TASK_QUEUE,
      workflowId: checkoutConfirmWorkflowId(c.id),
      args: [{ checkoutId: c.id }],
    }),
  });
}

describe('step 1 without a transaction, when the checkout is written between its read and its write', () => {
  it('refuses with 409, writes nothing and charges nothing; the retry confirms', async () => {
    const product = await createProduct(srv.url, s.token, { name: 'Raced step 1', prices: [{ amount_type: 'fixed', price_amount: 1600, price_currency: 'usd' }] });
    const checkout = await newCheckout(srv, s, product.id);
    const email = `step1-${randomUUID().slice(0, 8)}@example.com`;
    let patched = 0;
    const before = confirmFastPathStats.used;
    const err = await confirm(
      emThat(async () => {
        patched = (await call(srv.url, s.token, 'PATCH', `/v1/checkouts/${checkout.id}`, { metadata: { note: 'seller' } })).status;
      }),
      checkout,
      email,
    ).catch((e: unknown) => e as { status?: number; error?: string });
    expect(confirmFastPathStats.used - before).toBe(1);
    expect(patched).toBe(200);
    expect(err).toMatchObject({ status: 409, error: 'ResourceAlreadyExists' });
    const read = await call(srv.url, s.token, 'GET', `/v1/checkouts/${checkout.id}`);
    expect(read.body).toMatchObject({ status: 'open', metadata: { note: 'seller' }, customer_email: null, customer_name: null });
    const charges = await srv.deps.orm.em.fork().execute(`select status from checkout_charge_attempts where checkout_id = ?`, [checkout.id]);
    expect(charges).toEqual([]);

    const confirmed = await confirm(srv.deps.orm.em.fork(), checkout, email);
    expect(confirmed.checkout.status).toBe('confirmed');
    expect(confirmed.checkout.customerEmail).toBe(email);
    expect(await fulfilled(srv, s, checkout.id)).toBe('succeeded');
    const after = await call(srv.url, s.token, 'GET', `/v1/checkouts/${checkout.id}`);
    expect(after.body).toMatchObject({ status: 'succeeded', metadata: { note: 'seller' }, customer_email: email });
  });
});
