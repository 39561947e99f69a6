/** The product workflows' inputs and the activity that syncs a product's benefits. */
import type { ProductBenefitsChange, ProductBenefitsCursor, ProductBenefitsPage } from '../../../api/src/modules/benefits/product-sync.ts';

export interface ProductCreatedInput {
  productId: string;
}

export interface ProductBenefitsWorkflowInput extends ProductBenefitsChange {
  /** Where to resume (a continued run); the start of the first phase otherwise. */
  cursor?: ProductBenefitsCursor;
  /** Requests queued by earlier runs. */
  requested?: number;
}

export interface ProductBenefitsActivities {
  syncProductBenefitsPage(change: ProductBenefitsChange, cursor: ProductBenefitsCursor): Promise<ProductBenefitsPage>;
}
