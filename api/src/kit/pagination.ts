/** Pagination (`page`, `limit` capped at 100) and whitelisted sorting (`sorting=-created_at`, repeatable). */
import { z } from 'zod/v4';
import { queryList } from './validation.ts';

export const MAX_LIMIT = 100;
/**
 * Highest page: `(page - 1) * limit` stays far inside PostgreSQL's int4 (an offset past it was a 500);
 * a larger page is a 422 at `["query", "page"]`.
 */
export const MAX_PAGE = 1_000_000;

export const paginationQuery = {
  page: z.coerce.number().int().min(1).max(MAX_PAGE).default(1),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .default(10)
    .transform((v) => Math.min(v, MAX_LIMIT)),
};

export interface Page {
  page: number;
  limit: number;
}

export interface ListResource<T> {
  items: T[];
  pagination: { total_count: number; max_page: number };
}

export function paginated<T>(items: T[], total: number, { limit }: Page): ListResource<T> {
  return { items, pagination: { total_count: total, max_page: Math.ceil(total / limit) } };
}

export function pageOffset({ page, limit }: Page): { limit: number; offset: number } {
  return { limit, offset: (page - 1) * limit };
}

/** `sorting` query parameter accepting only the given keys, each optionally prefixed with `-`. */
export function sortingQuery<const K extends string>(keys: readonly K[], fallback: string[] = ['-created_at']) {
  const allowed = new Set<string>(keys);
  // The document lists the accepted values; validation keeps one issue at ["query", "sorting"].
  return queryList(z.string().meta({ enum: keys.flatMap((k) => [k, `-${k}`]) }))
    .refine((list) => list.every((s) => allowed.has(s.replace(/^-/, ''))), {
      message: `Input should be one of ${keys.flatMap((k) => [`'${k}'`, `'-${k}'`]).join(', ')}`,
    })
    .optional()
    .transform((v) => (v && v.length ? v : fallback));
}

/**
 * Turns `['-created_at', 'name']` into a MikroORM orderBy using a key → property map; a dotted
 * property (`customer.email`) sorts by a relation's field.
 */
export function toOrderBy(sorting: string[], map: Record<string, string>): Record<string, unknown>[] {
  return sorting.map((s) => {
    const dir = s.startsWith('-') ? 'desc' : 'asc';
    const key = s.replace(/^-/, '');
    return (map[key] ?? key)
      .split('.')
      .reduceRight<unknown>((inner, prop) => ({ [prop]: inner }), dir) as Record<string, unknown>;
  });
}
