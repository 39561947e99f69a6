/**
 * The customer portal in Chromium against the real stack: sign-in with the code mailed to MailDev,
 * the order and its invoice PDF, cancelling and resuming a subscription, deactivating a license key
 * activation, adding a card, making it the default and removing it, and a phone-width pass. axe-core runs on every page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PaymentMethod } from '../../api/src/modules/payment-methods/entities.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { startTestServer, waitForMail, type TestServer } from '../harness.ts';
import { insertFile } from '../catalogue/helpers-b.ts';
import { expectAccessible, fillCard, launchBrowser, newPage, PHONE, shop, shot, until, type Shop } from './portal-fixtures.ts';

let srv: TestServer;
let browser: Browser;
let s: Shop;
const email = `portal-buyer-${Date.now()}@example.com`;

async function buy(productId: string) {
  const c = await s.checkout({ product_id: productId });
  const r = await s.call('POST', `/v1/checkouts/client/${c.client_secret}/confirm`, {
    customer_email: email,
    customer_name: 'Paula Portal',
    customer_billing_address: { country: 'US' },
    confirmation_token_id: 'tok_visa',
  }, null);
  if (r.status !== 200) throw new Error(`confirm: ${r.status} ${JSON.stringify(r.body)}`);
  await until(async () => (await s.checkoutStatus(c.id)).status === 'succeeded');
}

beforeAll(async () => {
  [srv, browser] = await Promise.all([startTestServer({ env: { SERVE_UI: 'true' } }), launchBrowser()]);
  s = await shop(srv);
  const benefit = await s.licenseBenefit('Desktop app license');
  const file = await insertFile(srv, s.organization.id, 'downloadable', { name: 'desktop-app-setup.dmg' });
  const downloads = await s.created('POST', '/v1/benefits/', { type: 'downloadables', description: 'Installers', properties: { files: [file.id] } });
  const app = await s.product({ name: 'Desktop app', prices: [{ amount_type: 'fixed', price_amount: 2900 }] }, [benefit.id, downloads.id]);
  const plan = await s.product({ name: 'Cloud sync', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 900 }] });
  await s.product({ name: 'Cloud sync Plus', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 1900 }] });
  await buy(app.id);
  await buy(plan.id);
  const keys = await until(async () => {
    const r = await s.call('GET', `/v1/license-keys?organization_id=${s.organization.id}`);
    return r.body?.items?.length ? (r.body.items as { key: string }[]) : null;
  });
  const act = await s.call('POST', '/v1/customer-portal/license-keys/activate', { key: keys[0]!.key, organization_id: s.organization.id, label: 'Work laptop' }, null);
  expect(act.status).toBe(200);
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Customer portal' }).getByRole('link', { name, exact: true }).click();

describe('customer portal', () => {
  let context: BrowserContext;
  let page: Page;

  it('signs in with the code mailed to the customer', async () => {
    ({ context, page } = await newPage(browser));
    await page.goto(`${srv.url}/portal/${s.organization.slug}`);
    await page.getByRole('heading', { name: 'Sign in to see your purchases' }).waitFor();
    await expectAccessible(page, 'portal sign-in');
    await shot(page, 'portal-1-sign-in');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Email me a sign-in code' }).click();
    await page.getByLabel('Sign-in code').waitFor();
    const mails = await waitForMail(email, 20_000, 'sign-in code');
    const code = /: ([A-Z2-9]{8})$/.exec(mails[mails.length - 1]!.subject)![1]!;
    await page.getByLabel('Sign-in code').fill('WRONGCOD');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('This code is invalid or has expired.').waitFor();
    await expectAccessible(page, 'portal code');
    await shot(page, 'portal-2-code');
    await page.getByLabel('Sign-in code').fill(code);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Welcome back, Paula Portal' }).waitFor();
    await page.getByText(/Next charge: \$9\.00 on/).first().waitFor();
    await expectAccessible(page, 'portal overview');
    await shot(page, 'portal-3-overview');
  });

  it('shows the order and downloads its invoice', async () => {
    await nav(page, 'Orders');
    await page.getByRole('heading', { name: 'Orders' }).waitFor();
    await page.getByRole('link', { name: 'Desktop app' }).waitFor();
    await expectAccessible(page, 'orders');
    await page.getByRole('link', { name: 'Desktop app' }).click();
    await page.getByRole('heading', { name: 'Desktop app' }).waitFor();
    await expectAccessible(page, 'order');
    await shot(page, 'portal-4-order');
    const pdf = context.waitForEvent('response', { predicate: (r) => (r.headers()['content-type'] ?? '').includes('application/pdf') });
    await page.getByRole('button', { name: 'Download invoice (PDF)' }).click();
    const response = await pdf;
    expect(response.status()).toBe(200);
    // Chromium hands PDFs to its viewer; fetch the same presigned URL to look at the bytes.
    const bytes = Buffer.from(await (await fetch(response.url())).arrayBuffer());
    expect(bytes.subarray(0, 4).toString()).toBe('%PDF');
  });

  it('cancels and resumes the subscription', async () => {
    for (const p of context.pages()) if (p !== page) await p.close();
    await nav(page, 'Subscriptions');
    const card = page.getByRole('listitem', { name: 'Cloud sync', exact: true });
    await card.getByRole('button', { name: 'Cancel subscription' }).click();
    await card.getByLabel('Why are you canceling?').selectOption('too_expensive');
    await card.getByLabel('Anything we could do better?').fill('Too pricey for me right now.');
    await expectAccessible(page, 'cancel form');
    await shot(page, 'portal-5-cancel');
    await card.getByRole('button', { name: 'Confirm cancellation' }).click();
    await card.getByRole('button', { name: 'Resume subscription' }).waitFor();
    await card.getByText(/Canceled — access until/).waitFor();
    await shot(page, 'portal-6-canceled');
    const sub = await until(async () => {
      const r = await s.call('GET', '/v1/subscriptions/?limit=10');
      const x = r.body.items.find((i: any) => i.product.name === 'Cloud sync');
      return x?.cancel_at_period_end ? x : null;
    });
    expect(sub.customer_cancellation_reason).toBe('too_expensive');

    await card.getByRole('button', { name: 'Resume subscription' }).click();
    await card.getByRole('button', { name: 'Cancel subscription' }).waitFor();
    await card.getByText(/Next charge: \$9\.00 on/).waitFor();
    await until(async () => {
      const r = await s.call('GET', `/v1/subscriptions/${sub.id}`);
      return r.body.cancel_at_period_end === false;
    });
  });

  it('shows the proration before a plan change', async () => {
    const card = page.getByRole('listitem', { name: 'Cloud sync', exact: true });
    await card.getByRole('button', { name: 'Change plan' }).click();
    await card.getByRole('radio', { name: /Cloud sync Plus/ }).check();
    await card.getByText(/New price: \$19\.00 \/ month/).waitFor();
    await card.getByText(/For the rest of this period: credit of \$\d+\.\d\d for your current plan, charge of \$\d+\.\d\d for the new one\./).waitFor();
    // The amount the API's preview computes (the seller's default proration: carried to the next invoice).
    const added = await card.getByText(/is added to your next invoice\./).textContent();
    expect(added).toMatch(/^\$\d+\.\d\d is added to your next invoice\.$/);
    await expectAccessible(page, 'change plan');
    await shot(page, 'portal-7-change-plan');
    await card.getByRole('button', { name: 'Keep current plan' }).click();
  });

  it('deactivates a license key activation', async () => {
    await nav(page, 'Benefits');
    const key = page.getByLabel('License key', { exact: true });
    await key.waitFor();
    expect(await key.textContent()).toMatch(/^PRO-/);
    await page.getByRole('button', { name: 'Deactivate Work laptop' }).click();
    await until(async () => (await page.getByRole('button', { name: 'Deactivate Work laptop' }).count()) === 0);
    await page.getByText(/0 of 3 activations used/).waitFor();
    await page.getByRole('link', { name: 'Download desktop-app-setup.dmg' }).waitFor();
    await expectAccessible(page, 'benefits');
    await shot(page, 'portal-8-benefits');
  });

  it('adds a card, makes it the default and removes it', async () => {
    await nav(page, 'Payment methods');
    await page.getByRole('heading', { name: 'Payment methods' }).waitFor();
    await page.getByRole('button', { name: 'Add a card' }).click();
    await fillCard(page, '5555 5555 5555 4444');
    await page.getByLabel(/Use this card for my subscriptions/).uncheck();
    await expectAccessible(page, 'add a card');
    await page.getByRole('button', { name: 'Save card' }).click();
    await page.getByText('Your card was added.').waitFor();
    const master = page.getByRole('listitem', { name: 'Mastercard ending in 4444' });
    const visa = page.getByRole('listitem', { name: 'Visa ending in 4242' });
    await master.waitFor();
    await visa.getByText('Default', { exact: true }).waitFor();
    expect(await master.getByText('Default', { exact: true }).count()).toBe(0);
    await shot(page, 'portal-9-card-added');
    await page.getByRole('button', { name: 'Make default: Mastercard ending in 4444' }).click();
    await page.getByText('Your subscriptions will now be charged to the Mastercard card ending in 4444.').waitFor();
    await master.getByText('Default', { exact: true }).waitFor();
    expect(await visa.getByText('Default', { exact: true }).count()).toBe(0);
    const customers = await s.call('GET', `/v1/customers/?email=${encodeURIComponent(email)}`);
    const pms = await srv.deps.orm.em.fork().find(PaymentMethod, { customer: customers.body.items[0].id, deletedAt: null, isDefault: true });
    expect(pms.map((m) => m.last4)).toEqual(['4444']);
    await expectAccessible(page, 'default card');
    await shot(page, 'portal-9b-default-card');
    await page.getByRole('button', { name: 'Remove Mastercard ending in 4444' }).click();
    await page.getByText('The Mastercard card ending in 4444 was removed.').waitFor();
    await until(async () => (await page.getByRole('listitem', { name: 'Mastercard ending in 4444' }).count()) === 0);
  });

  it('highlights a past-due subscription with a way to update the card', async () => {
    const em = srv.deps.orm.em.fork();
    const sub = await em.findOneOrFail(Subscription, { product: { name: 'Cloud sync' }, customer: { email } });
    await em.nativeUpdate(Subscription, { id: sub.id }, { status: 'past_due' });
    await nav(page, 'Overview');
    const notice = page.getByRole('status').filter({ hasText: 'A payment failed' });
    await notice.waitFor();
    await expectAccessible(page, 'past due');
    await shot(page, 'portal-10-past-due');
    await notice.getByRole('link', { name: 'Update your card' }).click();
    await page.getByRole('heading', { name: 'Payment methods' }).waitFor();
    await em.nativeUpdate(Subscription, { id: sub.id }, { status: 'active' });
  });

  it('works at phone width (390×844)', async () => {
    await context.close();
    ({ context, page } = await newPage(browser, PHONE));
    // A new browser: the session from the other context is not here, so sign in again through a seller link.
    const customers = await s.call('GET', `/v1/customers/?email=${encodeURIComponent(email)}`);
    const session = await s.call('POST', '/v1/customer-sessions/', { customer_id: customers.body.items[0].id });
    await page.goto(session.body.customer_portal_url.replace(/^https?:\/\/[^/]+/, srv.url));
    await page.getByRole('heading', { name: 'Welcome back, Paula Portal' }).waitFor();
    expect(page.url()).not.toContain('customer_session_token');
    await expect(page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).resolves.toBe(true);
    // Every section's tab is on the screen, none scrolled out of the tab bar.
    const tabs = page.getByRole('navigation', { name: 'Customer portal' }).getByRole('link');
    expect(await tabs.count()).toBe(7);
    for (const tab of await tabs.all()) {
      const box = (await tab.boundingBox())!;
      expect(box.x, await tab.textContent() ?? '').toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, await tab.textContent() ?? '').toBeLessThanOrEqual(PHONE.width);
    }
    await expectAccessible(page, 'portal on a phone');
    await shot(page, 'portal-11-phone-overview');
    await nav(page, 'Subscriptions');
    await page.getByRole('listitem', { name: 'Cloud sync', exact: true }).waitFor();
    await shot(page, 'portal-12-phone-subscriptions');
    await nav(page, 'Payment methods');
    await page.getByRole('heading', { name: 'Payment methods', level: 1 }).waitFor();
    await context.close();
  });
});
