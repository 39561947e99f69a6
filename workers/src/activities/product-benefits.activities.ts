/**
 * Product benefit change activities: one page of the `product-benefits` workflow, which queues grant
 * and revoke requests into the per-(benefit, customer) workflows (benefits/product-sync.ts).
 * Idempotent: a retried page queues the same requests again, which the grant workflows ignore.
 */
import type { Deps } from '@emporia/api/src/deps.ts';
import type { ProductBenefitsActivities } from '@emporia/workflows/contracts';
import {
  syncProductBenefitsPage,
  type ProductBenefitsChange,
  type ProductBenefitsCursor,
  type ProductBenefitsPage,
} from '@emporia/api/src/modules/benefits/product-sync.ts';

export function createProductBenefitsActivities(deps: Deps): ProductBenefitsActivities {
  return {
    /** Grants the added and revokes the removed benefits for one page of the product's scopes. */
    async syncProductBenefitsPage(change: ProductBenefitsChange, cursor: ProductBenefitsCursor): Promise<ProductBenefitsPage> {
      return syncProductBenefitsPage(deps, change, cursor);
    },
  };
}

export type { ProductBenefitsActivities };
