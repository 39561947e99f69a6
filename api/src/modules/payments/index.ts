/** The configured card processor. */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config.ts';
import type { PaymentProcessor } from './processor.ts';
import { createSandboxProcessor } from './sandbox.ts';
import { createStripeProcessor } from './stripe.ts';

export type { PaymentProcessor } from './processor.ts';

/** `sandboxOrm` opens (once) the ORM the sandbox keeps its state in; deps.ts passes it. */
export function createProcessor(cfg: Config, sandboxOrm: () => Promise<MikroORM>): PaymentProcessor {
  if (cfg.PAYMENT_PROCESSOR === 'stripe') {
    return createStripeProcessor({ secretKey: cfg.STRIPE_SECRET_KEY!, apiBase: cfg.STRIPE_API_BASE });
  }
  return createSandboxProcessor(sandboxOrm);
}
