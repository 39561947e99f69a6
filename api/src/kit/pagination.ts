/** Pagination (`page`, `limit` capped at 100) and whitelisted sorting (`sorting=-created_at`, repeatable). */
import { z } from 'zod/v4';
import { queryList } from './validation.ts';

export const MAX_LIMIT = 100;

export const paginationQuery = {
  page: z.coerce.number().int().min(1).default(1),
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
  return queryList(z.string())
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
