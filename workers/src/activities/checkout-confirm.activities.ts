/**
 * The steps of the checkout-confirm workflow. Each is idempotent (keyed by the checkout id and
 * enforced by unique constraints) and runs on its own EntityManager fork; see orders/fulfilment.ts.
 */
import type { Deps } from '@emporia/api/src/deps.ts';
import { processorFor } from '@emporia/api/src/modules/checkouts/confirm.ts';
import {
  compensateCheckout,
  createOrderForCheckout,
  grantBenefitsForCheckout,
  markCheckoutSucceeded,
  receiptFor,
  savePaymentMethodForCheckout,
  type OrderStepResult,
} from '@emporia/api/src/modules/orders/fulfilment.ts';
import { withFaultPoints } from '../fault-injection.ts';

export function createCheckoutConfirmActivities(deps: Deps) {
  const { orm, cfg } = deps;
  const processor = () => processorFor(cfg, orm);
  return {
    async savePaymentMethodStep(checkoutId: string): Promise<string | null> {
      return withFaultPoints('savePaymentMethodStep', checkoutId, () => savePaymentMethodForCheckout(orm.em.fork(), checkoutId, processor().name));
    },
    async createOrderStep(checkoutId: string): Promise<OrderStepResult | null> {
      return withFaultPoints('createOrderStep', checkoutId, () => createOrderForCheckout(orm.em.fork(), checkoutId, processor().name));
    },
    async grantBenefitsStep(checkoutId: string, scope: OrderStepResult): Promise<{ granted: number; pending: number }> {
      return withFaultPoints('grantBenefitsStep', checkoutId, () => grantBenefitsForCheckout(deps, checkoutId, scope));
    },
    async markSucceededStep(checkoutId: string): Promise<void> {
      await withFaultPoints('markSucceededStep', checkoutId, () => markCheckoutSucceeded(orm.em.fork(), checkoutId, cfg.PUBLIC_URL));
    },
    async receiptStep(checkoutId: string) {
      return receiptFor(orm.em.fork(), checkoutId);
    },
    async compensateCheckout(checkoutId: string): Promise<{ refunded: boolean }> {
      return compensateCheckout(orm.em.fork(), checkoutId, processor(), cfg.PUBLIC_URL);
    },
  };
}

export type CheckoutConfirmActivities = ReturnType<typeof createCheckoutConfirmActivities>;
