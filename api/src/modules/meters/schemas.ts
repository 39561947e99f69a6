/** Wire shapes of meters, as `@polar-sh/sdk` parses them (Meter, MeterCreate, MeterUpdate, MeterQuantities). */
import { z } from 'zod/v4';
import { metadataSchema } from '../../kit/validation.ts';
import { metadataOutputSchema } from '../../kit/route-helpers.ts';
import type { Aggregation, Filter, FilterClause, Meter } from './entities.ts';
import { filterSize } from './filter.ts';

export const FILTER_OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'like', 'not_like'] as const;
export const TIME_INTERVALS = ['year', 'month', 'week', 'day', 'hour'] as const;
export type TimeInterval = (typeof TIME_INTERVALS)[number];

/** Limits on a filter's shape (the SQL it compiles to stays small and the recursion shallow). */
export const MAX_FILTER_DEPTH = 8;
export const MAX_FILTER_CLAUSES = 100;

const clauseSchema: z.ZodType<FilterClause> = z.object({
  property: z.string().min(1).max(255),
  operator: z.enum(FILTER_OPERATORS),
  value: z.union([z.string().max(1000), z.number().int(), z.boolean()]),
});

/**
 * A group nests at most MAX_FILTER_DEPTH levels. The schema is built unrolled to that depth rather
 * than recursive (z.lazy), so the OpenAPI document inlines it instead of pointing at `$defs` that
 * would not resolve inside the larger document.
 */
function groupSchema(depth: number): z.ZodType<Filter> {
  const clause = depth > 1 ? z.union([groupSchema(depth - 1), clauseSchema]) : clauseSchema;
  return z.object({ conjunction: z.enum(['and', 'or']), clauses: z.array(clause) });
}
export const filterSchema = groupSchema(MAX_FILTER_DEPTH);

const limitedFilter = filterSchema.refine((f) => filterSize(f).clauses <= MAX_FILTER_CLAUSES, {
  message: `A filter may hold at most ${MAX_FILTER_CLAUSES} clauses`,
});

export const aggregationSchema: z.ZodType<Aggregation> = z.discriminatedUnion('func', [
  z.object({ func: z.literal('count') }),
  z.object({ func: z.enum(['sum', 'max', 'min', 'avg']), property: z.string().min(1).max(255) }),
]);

export const meterCreateSchema = z.object({
  name: z.string().trim().min(3).max(255),
  filter: limitedFilter,
  aggregation: aggregationSchema,
  metadata: metadataSchema.optional(),
  organization_id: z.uuid().nullish(),
});

export const meterUpdateSchema = z.object({
  name: z.string().trim().min(3).max(255).nullish(),
  filter: limitedFilter.nullish(),
  aggregation: aggregationSchema.nullish(),
  metadata: metadataSchema.nullish(),
});

export const meterSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  name: z.string(),
  filter: filterSchema,
  aggregation: aggregationSchema,
  organization_id: z.uuid(),
  metadata: metadataOutputSchema,
});
export type MeterRead = z.infer<typeof meterSchema>;

export const meterQuantitiesSchema = z.object({
  quantities: z.array(z.object({ timestamp: z.string(), quantity: z.number() })),
});

export function serializeMeter(m: Meter): MeterRead {
  return {
    id: m.id,
    created_at: m.createdAt.toISOString(),
    modified_at: m.modifiedAt?.toISOString() ?? null,
    name: m.name,
    filter: m.filter,
    aggregation: m.aggregation,
    organization_id: m.organization.id,
    metadata: m.metadata,
  };
}
