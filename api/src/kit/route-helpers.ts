/** Shapes every /v1 route repeats: the list envelope, the seller credential requirement, metadata as read. */
import { z } from 'zod/v4';
import type { AuthRequirement } from './principals.ts';

/** `{ items, pagination: { total_count, max_page } }`, the envelope of every list response. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), pagination: z.object({ total_count: z.number().int(), max_page: z.number().int() }) });
}

/** A seller's credential (their session, an organization token or an OAuth2 token) holding every `scopes`. */
export function sellerAuth(...scopes: string[]): AuthRequirement {
  return { kinds: ['user', 'organization', 'oauth2'], scopes };
}

/** Metadata in a read model: string keys to string, number or boolean values. */
export const metadataOutputSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

/** A customer's portal session holding every `scopes`. */
export function customerAuth(...scopes: string[]): AuthRequirement {
  return { kinds: ['customer'], scopes };
}
