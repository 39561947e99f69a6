/** The configured card processor. */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config.ts';
import { initOrm } from '../../kit/db.ts';
import type { PaymentProcessor } from './processor.ts';
import { createSandboxProcessor } from './sandbox.ts';
import { createStripeProcessor } from './stripe.ts';

export type { PaymentProcessor } from './processor.ts';

/** Connections the sandbox processor keeps for itself. */
const SANDBOX_POOL_MAX = 4;

export function createProcessor(cfg: Config, _orm?: MikroORM): PaymentProcessor {
  if (cfg.PAYMENT_PROCESSOR === 'stripe') {
    return createStripeProcessor({ secretKey: cfg.STRIPE_SECRET_KEY!, apiBase: cfg.STRIPE_API_BASE });
  }
  // Its own pool: a confirm holds a transaction (and a connection) while it charges; sharing the
  // caller's pool would let concurrent confirms starve the processor of connections.
  let own: Promise<MikroORM> | undefined;
  return createSandboxProcessor(() => (own ??= initOrm({ DATABASE_URL: cfg.DATABASE_URL, DATABASE_POOL_MAX: SANDBOX_POOL_MAX })));
}
