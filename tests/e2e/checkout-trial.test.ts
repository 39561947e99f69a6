/**
 * A free trial as the buyer and the customer see it, in Chromium against the real stack (sandbox
 * processor): the hosted checkout of a product with a 14-day trial says so, with the first charge's
 * amount and date, $0.00 due today and a "Start trial" button; starting it with the test card charges
 * nothing and the customer portal shows the trial's end and the first charge, then, canceled during
 * the trial, that it ends without a charge. A product without a trial keeps the ordinary checkout.
 * Phone width and axe-core on every page; screenshots in .ci/out/screenshots/checkout-trial-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../harness.ts';
import { expectAccessible, fillCard, launchBrowser, newPage, PHONE, shop, shot, until, type Shop } from './portal-fixtures.ts';

let srv: TestServer;
let browser: Browser;
let s: Shop;
let trialPlan: { id: string };
let plainPlan: { id: string };
const email = `trial-buyer-${Date.now()}@example.com`;
/** As the page writes a date (en-US, medium). */
const day = (iso: string) => new Intl.DateTimeFormat('en-US', { dateStyle: 'medium' }).format(new Date(iso));

beforeAll(async () => {
  [srv, browser] = await Promise.all([startTestServer({ env: { SERVE_UI: 'true' } }), launchBrowser()]);
  s = await shop(srv);
  trialPlan = await s.product({
    name: 'Team plan', recurring_interval: 'month', trial_interval: 'day', trial_interval_count: 14,
    prices: [{ amount_type: 'fixed', price_amount: 2000 }],
  });
  plainPlan = await s.product({ name: 'Solo plan', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 900 }] });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

async function open(page: Page, clientSecret: string) {
  await page.goto(`${srv.url}/checkout/${clientSecret}`);
  await page.getByRole('form', { name: 'Checkout' }).waitFor();
}

const trialEndOf = async (checkoutId: string) => {
  const r = await s.call('GET', `/v1/checkouts/${checkoutId}`);
  expect(r.status).toBe(200);
  expect([r.body.active_trial_interval, r.body.active_trial_interval_count]).toEqual(['day', 14]);
  return r.body.trial_end as string;
};

describe('free trial at checkout and in the portal', () => {
  it('shows the trial, the first charge and $0.00 due today, and starts the trial with the test card', async () => {
    const c = await s.checkout({ product_id: trialPlan.id });
    const { context, page } = await newPage(browser);
    await open(page, c.client_secret);
    const end = day(await trialEndOf(c.id));
    const terms = page.getByRole('group', { name: 'Free trial' });
    await terms.getByText('14-day free trial', { exact: true }).waitFor();
    await terms.getByText(`Then $20.00 / month starting ${end}`, { exact: true }).waitFor();
    await expect(page.getByTestId('checkout-after-trial').textContent()).resolves.toBe('$20.00');
    await expect(page.getByTestId('checkout-total').textContent()).resolves.toBe('$0.00');
    await page.getByText('Due today', { exact: true }).waitFor();
    await page.getByText(`Your card is charged $20.00 on ${end}, then every month until you cancel.`, { exact: false }).waitFor();
    expect(await page.getByRole('button', { name: /^(Pay|Subscribe)/ }).count()).toBe(0);
    await expectAccessible(page, 'trial checkout');
    await shot(page, 'checkout-trial-1-form');

    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Name on card').fill('Tina Trial');
    await fillCard(page, '4242 4242 4242 4242');
    await page.getByRole('button', { name: 'Start trial' }).click();
    await page.getByRole('heading', { name: 'Thank you for your purchase!' }).waitFor();
    await page.getByText(`has started: nothing was charged today. The first charge, $20.00, is on ${end}.`).waitFor();
    await page.getByText('14-day free trial', { exact: true }).waitFor();
    expect(await page.getByText('Total: $20.00').count()).toBe(0);
    await expectAccessible(page, 'trial confirmation');
    await shot(page, 'checkout-trial-2-confirmation');
    await context.close();

    // Nothing was charged: the subscription is trialing and its first order is 0.
    const sub = await until(async () => {
      const r = await s.call('GET', `/v1/subscriptions/?organization_id=${s.organization.id}`);
      return r.body?.items?.length === 1 ? r.body.items[0] : null;
    });
    expect([sub.status, sub.product_id, sub.amount]).toEqual(['trialing', trialPlan.id, 2000]);
    const orders = await s.call('GET', `/v1/orders/?organization_id=${s.organization.id}`);
    expect(orders.body.items.map((o: { total_amount: number }) => o.total_amount)).toEqual([0]);
  });

  it('shows the trial’s end and the first charge in the portal, and that a trial canceled in it ends without a charge', async () => {
    const subs = await s.call('GET', `/v1/subscriptions/?organization_id=${s.organization.id}`);
    const sub = subs.body.items[0] as { id: string; trial_end: string; customer_id: string };
    const end = day(sub.trial_end);
    const { context, page } = await newPage(browser);
    const session = await s.call('POST', '/v1/customer-sessions/', { customer_id: sub.customer_id });
    expect(session.status).toBe(201);
    await page.goto(session.body.customer_portal_url.replace(/^https?:\/\/[^/]+/, srv.url));
    await page.getByRole('heading', { name: 'Welcome back, Tina Trial' }).waitFor();
    await page.getByText(`Free trial until ${end}`, { exact: true }).waitFor();
    await page.getByText(`First charge $20.00 on ${end}`, { exact: true }).waitFor();
    await expectAccessible(page, 'portal overview in a trial');
    await shot(page, 'checkout-trial-3-portal-overview');

    await page.getByRole('navigation', { name: 'Customer portal' }).getByRole('link', { name: 'Subscriptions', exact: true }).click();
    const card = page.getByRole('listitem', { name: 'Team plan', exact: true });
    await card.getByText(`Free trial until ${end}`, { exact: true }).waitFor();
    await card.getByText(`First charge $20.00 on ${end}`, { exact: true }).waitFor();
    await card.getByText('Trial', { exact: true }).waitFor();
    await shot(page, 'checkout-trial-4-portal-subscription');

    await card.getByRole('button', { name: 'Cancel subscription' }).click();
    await card.getByText(`Your free trial stays active until ${end}, then ends. You will not be charged.`).waitFor();
    await card.getByRole('button', { name: 'Confirm cancellation' }).click();
    await card.getByText(`Canceled during the trial — ends on ${end}, nothing will be charged`, { exact: true }).waitFor();
    expect(await card.getByText(/^First charge/).count()).toBe(0);
    const after = await s.call('GET', `/v1/subscriptions/${sub.id}`);
    expect([after.body.status, after.body.cancel_at_period_end]).toEqual(['trialing', true]);
    await expectAccessible(page, 'portal trial canceled');
    await shot(page, 'checkout-trial-5-portal-canceled');
    await context.close();
  });

  it('fits a phone (390×844)', async () => {
    const c = await s.checkout({ product_id: trialPlan.id });
    const { context, page } = await newPage(browser, PHONE);
    await open(page, c.client_secret);
    await page.getByText('14-day free trial', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Start trial' }).waitFor();
    await expect(page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).resolves.toBe(true);
    await expectAccessible(page, 'trial checkout on a phone');
    await shot(page, 'checkout-trial-6-phone');
    await context.close();
  });

  it('shows the full price as the first charge when a one-time discount is spent on the trial', async () => {
    await s.created('POST', '/v1/discounts/', { name: 'Welcome', code: 'WELCOME25', type: 'percentage', basis_points: 2500, duration: 'once' });
    const c = await s.checkout({ product_id: trialPlan.id });
    const { context, page } = await newPage(browser);
    await open(page, c.client_secret);
    await page.getByLabel('Discount code').fill('WELCOME25');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Discount WELCOME25 applied.').waitFor();
    const end = day(await trialEndOf(c.id));
    const terms = page.getByRole('group', { name: 'Free trial' });
    await terms.getByText(`Then $20.00 / month starting ${end}`, { exact: true }).waitFor();
    await terms.getByText('The discount applies to the trial; the first charge after it is at the full price.').waitFor();
    expect(await page.getByTestId('checkout-after-trial').count()).toBe(0);
    await expect(page.getByTestId('checkout-total').textContent()).resolves.toBe('$0.00');
    await page.getByText(`Your card is charged the full price on ${end}`, { exact: false }).waitFor();
    await expectAccessible(page, 'trial checkout with a one-time discount');
    await shot(page, 'checkout-trial-7-once-discount');
    await context.close();
  });

  it('keeps the ordinary checkout for a product without a trial', async () => {
    const c = await s.checkout({ product_id: plainPlan.id });
    const { context, page } = await newPage(browser);
    await open(page, c.client_secret);
    await page.getByRole('button', { name: 'Subscribe — $9.00 / month' }).waitFor();
    await page.getByText('Total due today', { exact: true }).waitFor();
    await expect(page.getByTestId('checkout-total').textContent()).resolves.toBe('$9.00');
    expect(await page.getByRole('group', { name: 'Free trial' }).count()).toBe(0);
    expect(await page.getByText(/free trial/i).count()).toBe(0);
    await context.close();
  });
});
