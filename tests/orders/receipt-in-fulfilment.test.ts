/**
 * The fulfilment step mails the receipt once its transaction has committed, so a purchase's
 * checkout-confirm workflow runs one local activity (the workflow's own mail activity is left for a
 * receipt the step could not send). Runs recorded before that (the receipt mailed by the workflow's
 * second local activity) replay on the current code: the fixtures are such histories, a one-time
 * purchase and a monthly subscription; `RECORD_CHECKOUT_HISTORY=1` records them again (only with
 * that older code).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { checkoutConfirmWorkflowId } from '../../workflows/src/ids.ts';
import { createCheckoutConfirmActivities } from '../../workers/src/activities/checkout-confirm.activities.ts';
import { startTestServer, uniqueEmail, waitForMail, type TestServer } from '../harness.ts';
import { createProduct } from '../checkouts/helpers.ts';
import { buyer, call, confirmRaw, confirmSeller, newCheckout, until, type Seller } from '../confirm/helpers.ts';

const FIXTURES = path.join(import.meta.dirname, 'fixtures');
const NAMES = ['checkout-confirm-one-time', 'checkout-confirm-monthly'] as const;

let srv: TestServer;
let s: Seller;
let oneTime: string;
let monthly: string;

const fixed = (amount: number) => [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }];

/** A confirmed purchase of `productId` whose workflow has completed; answers the checkout, the buyer and the workflow's history. */
async function purchase(productId: string) {
  const c = await newCheckout(srv, s, productId);
  const email = uniqueEmail('receipt');
  const res = await confirmRaw(srv, c.client_secret, { ...buyer(email), confirmation_token_id: 'tok_visa' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const handle = srv.deps.temporal.workflow.getHandle(checkoutConfirmWorkflowId(c.id));
  const result = await until(async () => handle.result().catch(() => null));
  expect(result).toMatchObject({ status: 'succeeded' });
  return { checkout: c, email, handle, history: await handle.fetchHistory() };
}

/** The activity types of the workflow's local activities, in order. */
function localActivities(history: temporal.api.history.v1.IHistory): string[] {
  return (history.events ?? [])
    .map((e) => e.markerRecordedEventAttributes)
    .filter((m) => m?.markerName === 'core_local_activity')
    .map((m) => JSON.parse(Buffer.from(m!.details!.data!.payloads![0]!.data!).toString()).activity_type as string);
}

async function receiptRows(checkoutId: string): Promise<{ kind: string; recipient: string }[]> {
  return srv.deps.orm.em
    .fork()
    .getConnection()
    .execute('select kind, recipient from notifications where dedupe_key = ?', [`${checkoutConfirmWorkflowId(checkoutId)}:receipt`]);
}

beforeAll(async () => {
  srv = await startTestServer();
  s = await confirmSeller(srv);
  const benefit = await call(srv.url, s.token, 'POST', '/v1/benefits/', { type: 'license_keys', description: 'License', properties: { prefix: 'rcp' } });
  expect(benefit.status).toBe(201);
  oneTime = (await createProduct(srv.url, s.token, { name: 'Desktop app', prices: fixed(2500) })).id;
  monthly = (await createProduct(srv.url, s.token, { name: 'Pro', recurring_interval: 'month', prices: fixed(1900) })).id;
  for (const id of [oneTime, monthly]) expect((await call(srv.url, s.token, 'POST', `/v1/products/${id}/benefits`, { benefits: [benefit.body.id] })).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await srv?.close();
});

describe.runIf(process.env.RECORD_CHECKOUT_HISTORY === '1')('recording', () => {
  it('records a one-time purchase and a monthly subscription', { timeout: 120_000 }, async () => {
    for (const [name, productId] of [[NAMES[0], oneTime], [NAMES[1], monthly]] as const) {
      const p = await purchase(productId);
      await waitForMail(p.email, 20_000, 'receipt');
      mkdirSync(FIXTURES, { recursive: true });
      // The proto's own JSON (enum names, base64 payloads), as `temporal workflow show --output json` writes it.
      writeFileSync(path.join(FIXTURES, `${name}.json`), JSON.stringify(p.history, null, 1));
    }
  });
});

describe('runs recorded while the workflow mailed the receipt', () => {
  it.each(NAMES)('%s replays on the current workflow code', async (name) => {
    const history = temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8')));
    // The recorded run mailed the receipt from the workflow's second local activity.
    expect(localActivities(history)).toEqual(['fulfilStep', 'sendNotification']);
    await Worker.runReplayHistory({ workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! } }, history, `checkout-confirm-replay-${name}`);
  });
});

describe('the receipt mailed by the fulfilment step', () => {
  it.each([
    ['a one-time purchase', () => oneTime],
    ['a monthly subscription', () => monthly],
  ])('%s: one local activity, one receipt with the order id, one notification row', { timeout: 120_000 }, async (_, product) => {
    const p = await purchase(product());
    expect(localActivities(p.history)).toEqual(['fulfilStep']);
    const orders = await call(srv.url, s.token, 'GET', `/v1/orders/?checkout_id=${p.checkout.id}`);
    expect(orders.status).toBe(200);
    expect(orders.body.items).toHaveLength(1);
    const mails = await waitForMail(p.email, 20_000, 'receipt');
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text).toContain(`Order id: ${orders.body.items[0].id}`);
    expect(await receiptRows(p.checkout.id)).toEqual([{ kind: 'order.receipt', recipient: p.email }]);
  });

  it('a retried fulfilment step finds the receipt sent and mails nothing again', { timeout: 120_000 }, async () => {
    const p = await purchase(oneTime);
    await waitForMail(p.email, 20_000, 'receipt');
    // As if the step's answer had been lost after it mailed: the retry finds the order and the receipt's row.
    const retry = await createCheckoutConfirmActivities(srv.deps).fulfilStep(p.checkout.id);
    expect(retry).toMatchObject({ succeeded: true, receipt: null, receiptMailed: true });
    expect(await receiptRows(p.checkout.id)).toHaveLength(1);
    // A later mail to the same buyer, sent after the retry, shows the retry's mail would have arrived before it.
    await srv.deps.mailer.send({ to: p.email, subject: 'marker', text: 'after the retry' });
    const mails = await waitForMail(p.email, 20_000, 'marker');
    expect(mails).toHaveLength(2);
    expect(mails.filter((m) => m.subject.includes('receipt'))).toHaveLength(1);
  });
});
