/**
 * Changing a product's benefits (POST /v1/products/{id}/benefits) follows through to the customers who
 * own it: the `product-benefits` workflow grants the added benefits and revokes the removed ones,
 * scoped like the original grants (the subscription's, or the one-time order's), through the
 * benefit-grant workflows and their webhooks. A benefit also held through another product stays, a
 * purchase whose benefits a refund revoked gets nothing new, and another organization is untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benefitGrantWorkflowId } from '../../workflows/src/ids.ts';
import { WorkflowStart } from '../../api/src/kit/workflow-starts.ts';
import { requestGrantAction } from '../../api/src/modules/benefits/lifecycle.ts';
import { PRODUCT_BENEFITS_WORKFLOW, type ProductBenefitsChange } from '../../api/src/modules/benefits/product-sync.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { sellerWithSdk } from '../catalogue/helpers-c.ts';
import { GRANT_SCOPES, buy, call, createBenefit, grantOf, outboxData, productWith, until, type GrantRead, type Purchase, type Seller } from './helpers.ts';

const SLOW = 300_000;
const SCOPES = [...GRANT_SCOPES, 'refunds:read', 'refunds:write'];

let srv: TestServer;
let s: Seller;
let other: Seller;

beforeAll(async () => {
  srv = await startTestServer({ env: { DATABASE_POOL_MAX: '8' } });
  s = await sellerWithSdk(srv, SCOPES);
  other = await sellerWithSdk(srv, SCOPES);
});
afterAll(async () => {
  await srv?.close();
});

/** Every grant of the benefit (seller API), optionally of one customer. */
async function grants(seller: Seller, benefitId: string, customerId?: string): Promise<GrantRead[]> {
  const res = await call(srv.url, seller.token, 'GET', `/v1/benefits/${benefitId}/grants?limit=100${customerId ? `&customer_id=${customerId}` : ''}`);
  expect(res.status).toBe(200);
  return res.body.items as GrantRead[];
}

/** The customer's state as the seller sees it. */
async function state(seller: Seller, customerId: string) {
  const res = await call(srv.url, seller.token, 'GET', `/v1/customers/${customerId}/state`);
  expect(res.status).toBe(200);
  return res.body as { granted_benefits: { id: string; benefit_id: string }[] };
}

/** License keys of the benefit (seller API). */
async function licenseKeys(seller: Seller, benefitId: string) {
  const res = await call(srv.url, seller.token, 'GET', `/v1/license-keys?benefit_id=${benefitId}&limit=100`);
  expect(res.status).toBe(200);
  return res.body.items as { id: string; customer_id: string; status: string }[];
}

async function setBenefits(seller: Seller, productId: string, benefitIds: string[]) {
  const res = await call(srv.url, seller.token, 'POST', `/v1/products/${productId}/benefits`, { benefits: benefitIds });
  expect(res.status).toBe(200);
  expect(res.body.benefits.map((b: { id: string }) => b.id)).toEqual(benefitIds);
}

/** Waits until the product's benefit-change workflows finished queueing their requests. */
async function changesQueued(productId: string): Promise<void> {
  const rows = await srv.deps.orm.em.fork().find(WorkflowStart, { workflowType: PRODUCT_BENEFITS_WORKFLOW });
  const mine = rows.filter((r) => (r.args[0] as ProductBenefitsChange).productId === productId);
  expect(mine.length).toBeGreaterThan(0);
  for (const r of mine) await srv.deps.temporal.workflow.getHandle(r.workflowId).result();
}

/** Waits until the (benefit, customer) grant workflow, if it ever ran, applied everything queued. */
async function grantWorkflowIdle(benefitId: string, customerId: string): Promise<void> {
  try {
    await srv.deps.temporal.workflow.getHandle(benefitGrantWorkflowId(benefitId, customerId)).result();
  } catch (err) {
    if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
  }
}

/**
 * The benefit actions the latest run of the (benefit, customer) grant workflow applied, read from its
 * history: each activity's input and the result it completed with (null if it did not complete).
 */
async function grantActions(benefitId: string, customerId: string) {
  const history = await srv.deps.temporal.workflow.getHandle(benefitGrantWorkflowId(benefitId, customerId)).fetchHistory();
  const decode = (p: { data?: Uint8Array | null } | undefined) => (p?.data ? JSON.parse(Buffer.from(p.data).toString()) : null);
  const events = history.events ?? [];
  return events
    .filter((e) => e.activityTaskScheduledEventAttributes)
    .map((e) => {
      const completed = events.find((c) => String(c.activityTaskCompletedEventAttributes?.scheduledEventId) === String(e.eventId));
      return {
        input: decode(e.activityTaskScheduledEventAttributes!.input?.payloads?.[0]) as {
          action: string;
          subscriptionId: string | null;
          guard?: { productId: string; has: boolean };
        },
        result: completed ? (decode(completed.activityTaskCompletedEventAttributes!.result?.payloads?.[0]) as Record<string, unknown>) : null,
      };
    });
}

describe('changing the benefits of a product customers own', { timeout: SLOW }, () => {
  let license: string;
  let custom: string;
  let oneTime: string;
  let recurring: string;
  let second: string;
  let buyer: Purchase;
  let buyerSecond: Purchase;
  let subscriber: Purchase;
  let refunded: Purchase;
  let otherLicense: string;
  let otherBuyer: Purchase;

  beforeAll(async () => {
    license = await createBenefit(srv, s, { type: 'license_keys', description: 'License', properties: { prefix: 'app' } });
    custom = await createBenefit(srv, s, { type: 'custom', description: 'Priority support', properties: { note: 'Write to vip@example.com' } });
    oneTime = await productWith(srv, s, [license]);
    recurring = await productWith(srv, s, [license], true);
    second = await productWith(srv, s, [license]);

    // One buyer of the one-time product who also owns the license through a second product; one
    // subscriber; one buyer whose purchase was refunded with its benefits revoked.
    buyer = await buy(srv, s, oneTime, 'owner@example.com');
    buyerSecond = await buy(srv, s, second, 'owner@example.com');
    subscriber = await buy(srv, s, recurring);
    refunded = await buy(srv, s, oneTime);
    expect(buyerSecond.customerId).toBe(buyer.customerId);
    expect(subscriber.subscriptionId).not.toBeNull();

    // Another organization with a license benefit of its own, and a buyer.
    otherLicense = await createBenefit(srv, other, { type: 'license_keys', description: 'Their license', properties: {} });
    otherBuyer = await buy(srv, other, await productWith(srv, other, [otherLicense]));

    await until(async () => (await grants(s, license, buyer.customerId)).filter((g) => g.is_granted).length === 2);
    await grantOf(srv, s, license, subscriber.customerId);
    await grantOf(srv, s, license, refunded.customerId);
    await grantOf(srv, other, otherLicense, otherBuyer.customerId);

    const order = await call(srv.url, s.token, 'GET', `/v1/orders/${refunded.orderId}`);
    const refund = await call(srv.url, s.token, 'POST', '/v1/refunds/', {
      order_id: refunded.orderId,
      reason: 'customer_request',
      amount: order.body.net_amount,
      revoke_benefits: true,
    });
    expect(refund.status).toBe(201);
    await grantOf(srv, s, license, refunded.customerId, (g) => g.is_revoked);

    // The change: the custom benefit instead of the license key, on both products.
    await setBenefits(s, oneTime, [custom]);
    await setBenefits(s, recurring, [custom]);
  });

  it('grants the added benefit to every customer who owns the product, scoped like the purchase', async () => {
    const granted = await until(async () => {
      const items = (await grants(s, custom)).filter((g) => g.is_granted);
      return items.length === 2 ? items : null;
    });
    const byCustomer = Object.fromEntries(granted.map((g) => [g.customer_id, g]));
    expect(byCustomer[buyer.customerId]).toMatchObject({ order_id: buyer.orderId, subscription_id: null, is_revoked: false });
    expect(byCustomer[subscriber.customerId]).toMatchObject({ subscription_id: subscriber.subscriptionId, order_id: null, is_revoked: false });

    // The portal shows it to the customer, and the customer state lists it.
    const portal = await subscriber.polar.customerPortal.benefitGrants.list(subscriber.security, { benefitId: custom });
    expect(portal.result.items).toHaveLength(1);
    expect(portal.result.items[0]!.benefit.properties).toEqual({ note: 'Write to vip@example.com' });
    await until(async () => (await state(s, subscriber.customerId)).granted_benefits.some((b) => b.benefit_id === custom));

    // benefit_grant.created webhooks, as for a purchase.
    await until(async () => {
      const created = (await outboxData(srv, s.organization.id, 'benefit_grant.created')).filter((d) => d.benefit_id === custom);
      return created.length === 2;
    });
  });

  it('revokes the removed benefit in the product’s scopes, keeping the grant held through another product', async () => {
    await until(async () => {
      const items = await grants(s, license, subscriber.customerId);
      return items.length === 1 && items[0]!.is_revoked;
    });
    const ownerGrants = await until(async () => {
      const items = await grants(s, license, buyer.customerId);
      return items.some((g) => g.order_id === buyer.orderId && g.is_revoked) ? items : null;
    });
    expect(ownerGrants).toHaveLength(2);
    expect(ownerGrants.find((g) => g.order_id === buyerSecond.orderId)).toMatchObject({ is_granted: true, is_revoked: false });

    // License keys: the second product's key still works, the others are revoked.
    const keys = await licenseKeys(s, license);
    const kept = ownerGrants.find((g) => g.order_id === buyerSecond.orderId)!;
    expect(keys.find((k) => k.id === kept.properties.license_key_id)).toMatchObject({ status: 'granted' });
    expect(keys.filter((k) => k.status === 'granted').map((k) => k.customer_id)).toEqual([buyer.customerId]);

    // Customer state: the owner has the custom benefit and the license (through the second product);
    // the subscriber only the custom benefit.
    const ownerState = await until(async () => {
      const st = await state(s, buyer.customerId);
      return st.granted_benefits.length === 2 ? st : null;
    });
    expect(ownerState.granted_benefits.filter((b) => b.benefit_id === license).map((b) => b.id)).toEqual([kept.id]);
    await until(async () => {
      const sub = await state(s, subscriber.customerId);
      return sub.granted_benefits.length === 1 && sub.granted_benefits[0]!.benefit_id === custom;
    });

    // benefit_grant.revoked webhooks for the two revoked grants only (besides the refund's).
    await until(async () => {
      const revoked = (await outboxData(srv, s.organization.id, 'benefit_grant.revoked')).filter((d) => d.benefit_id === license);
      const ids = new Set(revoked.map((d) => d.id));
      return ids.size === 3 && !ids.has(kept.id);
    });
  });

  it('gives nothing to a purchase whose benefits a refund revoked, and leaves another organization alone', async () => {
    await changesQueued(oneTime);
    await changesQueued(recurring);
    await grantWorkflowIdle(custom, refunded.customerId);
    expect(await grants(s, custom, refunded.customerId)).toEqual([]);
    expect((await state(s, refunded.customerId)).granted_benefits).toEqual([]);

    const theirs = await grants(other, otherLicense);
    expect(theirs).toHaveLength(1);
    expect(theirs[0]).toMatchObject({ customer_id: otherBuyer.customerId, is_granted: true, is_revoked: false });
    expect((await licenseKeys(other, otherLicense)).map((k) => k.status)).toEqual(['granted']);
    const otherState = await state(other, otherBuyer.customerId);
    expect(otherState.granted_benefits.map((b) => b.benefit_id)).toEqual([otherLicense]);
  });

  it('skips a grant request that went stale while queued (the benefit left the product)', async () => {
    // As a renewal that read the product's benefits just before the change would send it.
    await requestGrantAction(srv.deps, license, subscriber.customerId, {
      action: 'grant',
      subscriptionId: subscriber.subscriptionId,
      orderId: null,
      guard: { productId: recurring, has: true },
    });
    await grantWorkflowIdle(license, subscriber.customerId);
    // The workflow applied the request, and the action answered that the guard no longer holds.
    const applied = (await grantActions(license, subscriber.customerId)).filter(
      (a) => a.input.action === 'grant' && a.input.guard?.productId === recurring && a.input.subscriptionId === subscriber.subscriptionId,
    );
    expect(applied).toHaveLength(1);
    expect(applied[0]!.result).toMatchObject({ status: 'skipped', detail: 'no longer granted by the product' });
    const [g] = await grants(s, license, subscriber.customerId);
    expect(g).toMatchObject({ is_granted: false, is_revoked: true });
  });

  it('grants a benefit added back to the purchases that still own the product', async () => {
    await setBenefits(s, oneTime, [custom, license]);
    const regranted = await until(async () => {
      const items = await grants(s, license, buyer.customerId);
      const g = items.find((x) => x.order_id === buyer.orderId);
      return g?.is_granted ? g : null;
    });
    expect(regranted.is_revoked).toBe(false);
    // The refunded purchase does not get the license back.
    await changesQueued(oneTime);
    await grantWorkflowIdle(license, refunded.customerId);
    const refundedGrant = await grants(s, license, refunded.customerId);
    expect(refundedGrant).toHaveLength(1);
    expect(refundedGrant[0]).toMatchObject({ is_revoked: true, is_granted: false });
  });
});
