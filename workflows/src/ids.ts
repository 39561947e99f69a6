/**
 * Deterministic workflow ids from business keys: starting the same process twice is a no-op.
 * Plain functions with no Temporal imports, so the API can use them too.
 */
export const productCreatedWorkflowId = (productId: string) => `product-created:${productId}`;
