/** Meters: a filter over ingested events and an aggregation turning them into a quantity. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties, type Metadata } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';

export type FilterOperator = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'like' | 'not_like';
export interface FilterClause {
  property: string;
  operator: FilterOperator;
  value: string | number | boolean;
}
export interface Filter {
  conjunction: 'and' | 'or';
  clauses: (FilterClause | Filter)[];
}
export type Aggregation =
  | { func: 'count' }
  | { func: 'sum' | 'max' | 'min' | 'avg'; property: string };

export const Meter = defineEntity({
  name: 'Meter',
  tableName: 'meters',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    name: p.string(),
    filter: p.json<Filter>(),
    aggregation: p.json<Aggregation>(),
    metadata: p.json<Metadata>(),
  },
});
export type Meter = InferEntity<typeof Meter>;
