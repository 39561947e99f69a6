/**
 * product-benefits:<product_id>:<change_id> — after a product's benefits changed, grants the added and
 * revokes the removed benefits for every customer entitled through the product, one page of scopes per
 * activity (benefits/product-sync.ts). The activities only queue requests into the benefit-grant
 * workflows, which apply them; so this finishes quickly even for many customers. Continues as new
 * after many pages, carrying the cursor.
 */
import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { ProductBenefitsCursor, ProductBenefitsPage } from '../../../api/src/modules/benefits/product-sync.ts';
import type { ProductBenefitsActivities, ProductBenefitsWorkflowInput } from './contract.ts';

const acts = proxyActivities<ProductBenefitsActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** Pages handled by one run before it continues as new. */
const PAGES_PER_RUN = 500;

export async function productBenefitsWorkflow(input: ProductBenefitsWorkflowInput): Promise<{ requested: number }> {
  const { cursor: start, requested: before, ...change } = input;
  let cursor: ProductBenefitsCursor | null = start ?? { phase: 'subscriptions', after: null };
  let requested = before ?? 0;
  let pages = 0;
  while (cursor) {
    if (pages >= PAGES_PER_RUN) {
      await continueAsNew<typeof productBenefitsWorkflow>({ ...change, cursor, requested });
    }
    const page: ProductBenefitsPage = await acts.syncProductBenefitsPage(change, cursor);
    requested += page.requested;
    cursor = page.next;
    pages++;
  }
  return { requested };
}
