/**
 * A buyer's checkout of a product with a trial, through the real checkout services against a
 * lifecycle's database (the checkout link's fresh checkout, the buyer's confirmation with a sandbox
 * card, the fulfilment the checkout-confirm workflow runs), for tests on the time-skipping server.
 */
import { randomUUID } from 'node:crypto';
import { CheckoutLink } from '../../api/src/modules/checkout-links/entities.ts';
import { findCheckoutLinkBySecret } from '../../api/src/modules/checkout-links/service.ts';
import { checkoutConfirmSchema, confirmCheckout } from '../../api/src/modules/checkouts/confirm.ts';
import { createCheckoutFromLink } from '../../api/src/modules/checkouts/service.ts';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { fulfilCheckout } from '../../api/src/modules/orders/fulfilment.ts';
import { Product, ProductPrice } from '../../api/src/modules/products/entities.ts';
import type { TrialInterval } from '../../api/src/modules/trials/index.ts';
import type { Lifecycle } from '../subscriptions/lifecycle-helpers.ts';

export async function seedTrialProduct(
  lc: Pick<Lifecycle, 'deps'>,
  opts: { amount: number; trial: { interval: TrialInterval; count: number } },
): Promise<{ orgId: string; productId: string; linkSecret: string }> {
  const em = lc.deps.orm.em.fork();
  const slug = `org-${randomUUID().slice(0, 8)}`;
  const org = em.create(Organization, { name: `Org ${slug}`, slug, socials: [], featureSettings: {}, subscriptionSettings: {}, metadata: {} });
  const product = em.create(Product, {
    organization: org,
    name: 'Trial plan',
    description: null,
    recurringInterval: 'month',
    trialInterval: opts.trial.interval,
    trialIntervalCount: opts.trial.count,
    isArchived: false,
    metadata: {},
  });
  em.create(ProductPrice, {
    product,
    amountType: 'fixed',
    priceCurrency: 'usd',
    priceAmount: opts.amount,
    minimumAmount: null,
    maximumAmount: null,
    presetAmount: null,
    meter: null,
    unitAmount: null,
    capAmount: null,
    isArchived: false,
  });
  const link = em.create(CheckoutLink, {
    organization: org,
    clientSecret: `polar_cl_${randomUUID().replaceAll('-', '')}`,
    paymentProcessor: 'stripe',
    label: null,
    allowDiscountCodes: true,
    discount: null,
    successUrl: null,
    metadata: {},
    productPrice: null,
    deletedAt: null,
  });
  link.products.add(product);
  await em.flush();
  return { orgId: org.id, productId: product.id, linkSecret: link.clientSecret };
}

/** Opens the link's checkout, confirms it as `email` (billed in `country`) with `token` and fulfils it; answers the checkout's read fields and the fulfilment. */
export async function buyThroughLink(lc: Pick<Lifecycle, 'deps'>, linkSecret: string, email: string, token = 'tok_visa', country = 'US') {
  const { deps } = lc;
  const em = deps.orm.em.fork();
  const link = await findCheckoutLinkBySecret(em, linkSecret);
  const c = await createCheckoutFromLink(em, link!, { customer_email: email }, { ttlSeconds: 3600 });
  await em.flush();
  const before = {
    isPaymentRequired: c!.isPaymentRequired,
    isPaymentSetupRequired: c!.isPaymentSetupRequired,
    totalAmount: c!.totalAmount,
    activeTrialInterval: c!.activeTrialInterval ?? null,
    activeTrialIntervalCount: c!.activeTrialIntervalCount ?? null,
  };
  const input = checkoutConfirmSchema.parse({
    customer_email: email,
    customer_name: 'Tia Trial',
    customer_billing_address: { country },
    confirmation_token_id: token,
  });
  await confirmCheckout(deps.orm.em.fork(), deps, c!.clientSecret, input);
  const fulfilled = await fulfilCheckout(deps.orm.em.fork(), deps.integrations, c!.id, {
    processor: deps.processor.name,
    publicUrl: deps.cfg.PUBLIC_URL,
  });
  if (!fulfilled) throw new Error('checkout not fulfilled');
  return { checkoutId: c!.id, before, ...fulfilled };
}
