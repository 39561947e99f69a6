/**
 * Step 3 of the common confirmation as one guarded statement (checkouts/confirm-commit-sql.ts) when the
 * world changed between step 1 and step 3, i.e. during the processor's call: the statement writes
 * nothing and the ORM path confirms on what is there now. The changes are made by a processor that
 * does them before charging (the sandbox's charge, then the test's write), through another connection.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutConfirmWorkflowId } from '@emporia/workflows/ids';
import { confirmCheckout, checkoutConfirmSchema } from '../../api/src/modules/checkouts/confirm.ts';
import { confirmCommitSqlStats } from '../../api/src/modules/checkouts/confirm-commit-sql.ts';
import type { PaymentProcessor } from '../../api/src/modules/payments/index.ts';
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

const fixed = (amount: number) => [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }];

/** The sandbox processor, running `during` before each charge. */
function processorThat(during: () => Promise<unknown>): PaymentProcessor {
  const real = srv.deps.processor;
  return new Proxy(real, {
    get(target, prop, receiver) {
      if (prop === 'confirmPayment') {
        return async (input: Parameters<PaymentProcessor['confirmPayment']>[0]) => {
          await during();
          return target.confirmPayment(input);
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

async function confirmWith(checkout: { id: string; client_secret: string }, email: string, during: () => Promise<unknown>) {
  const before = confirmCommitSqlStats.used;
  const confirmed = await confirmCheckout(
    srv.deps.orm.em.fork(),
    { ...srv.deps, processor: processorThat(during) },
    checkout.client_secret,
    checkoutConfirmSchema.parse({ ...buyer(email), confirmation_token_id: 'tok_visa' }),
    {
      deps: srv.deps,
      workflow: (c) => ({
        workflowType: 'checkoutConfirmWorkflow',
        taskQueue: srv.deps.cfg.TEMPORAL_TASK_QUEUE,
        workflowId: checkoutConfirmWorkflowId(c.id),
        args: [{ checkoutId: c.id }],
      }),
    },
  );
  return { confirmed, statementUsed: confirmCommitSqlStats.used - before };
}

describe('step 3 as one statement, when something changed during the charge', () => {
  it('a customer with the buyer\'s e-mail created meanwhile: the purchase goes to that customer, one customer, one charge', async () => {
    const product = await createProduct(srv.url, s.token, { name: 'Raced customer', prices: fixed(1300) });
    const checkout = await newCheckout(srv, s, product.id);
    const email = `raced-${randomUUID().slice(0, 8)}@example.com`;
    let made: { status: number; body: { id: string } } | null = null;
    const { confirmed, statementUsed } = await confirmWith(checkout, email, async () => {
      made = await call(srv.url, s.token, 'POST', '/v1/customers/', { email, metadata: {} });
    });
    expect(made!.status).toBe(201);
    expect(statementUsed).toBe(0);
    expect(confirmed.checkout.customer?.id).toBe(made!.body.id);
    expect(await fulfilled(srv, s, checkout.id)).toBe('succeeded');
    const customers = await call(srv.url, s.token, 'GET', `/v1/customers/?email=${encodeURIComponent(email)}`);
    expect(customers.body.items.map((c: { id: string }) => c.id)).toEqual([made!.body.id]);
    // The ORM path filled in the name the existing customer lacked.
    expect(customers.body.items[0].name).toBe('Bea Buyer');
    const orders = await call(srv.url, s.token, 'GET', `/v1/orders/?checkout_id=${checkout.id}`);
    expect(orders.body.items.map((o: { customer_id: string; status: string }) => [o.customer_id, o.status])).toEqual([[made!.body.id, 'paid']]);
    const charges = await srv.deps.orm.em.fork().execute(`select status from checkout_charge_attempts where checkout_id = ?`, [checkout.id]);
    expect(charges).toEqual([{ status: 'confirmed' }]);
  });

  it('the checkout changed meanwhile (the seller\'s metadata): the ORM path confirms the row as it is now', async () => {
    const product = await createProduct(srv.url, s.token, { name: 'Changed checkout', prices: fixed(1400) });
    const checkout = await newCheckout(srv, s, product.id);
    const email = `changed-${randomUUID().slice(0, 8)}@example.com`;
    let patched = 0;
    const { confirmed, statementUsed } = await confirmWith(checkout, email, async () => {
      patched = (await call(srv.url, s.token, 'PATCH', `/v1/checkouts/${checkout.id}`, { metadata: { note: 'changed' } })).status;
    });
    expect(patched).toBe(200);
    expect(statementUsed).toBe(0);
    expect(confirmed.checkout.status).toBe('confirmed');
    expect(await fulfilled(srv, s, checkout.id)).toBe('succeeded');
    const read = await call(srv.url, s.token, 'GET', `/v1/checkouts/${checkout.id}`);
    expect(read.body.metadata).toEqual({ note: 'changed' });
    const events = await srv.deps.orm.em.fork().execute<{ data: { status: string; metadata: unknown } }[]>(
      `select data from outbox_events where type = 'checkout.updated' and data->>'id' = ? and data->>'status' = 'confirmed'`,
      [checkout.id],
    );
    expect(events.map((e) => e.data.metadata)).toEqual([{ note: 'changed' }]);
  });

  it('nothing changed: the statement confirms', async () => {
    const product = await createProduct(srv.url, s.token, { name: 'Unchanged checkout', prices: fixed(1500) });
    const checkout = await newCheckout(srv, s, product.id);
    const { statementUsed } = await confirmWith(checkout, `calm-${randomUUID().slice(0, 8)}@example.com`, async () => {});
    expect(statementUsed).toBe(1);
    expect(await fulfilled(srv, s, checkout.id)).toBe('succeeded');
  });
});
