/**
 * Rows read as JSON (`to_jsonb(row)`) turned into plain objects of an entity's shape, for the
 * serializers, without MikroORM: no identity map, no hydration, no references or collections. Each
 * column becomes its property (from the entity's metadata), timestamps `Date`s, a many-to-one the
 * object given for it or `{ id }`. Collections stay unset: a serializer that walks one fails loudly
 * instead of answering something else. Used where the rows only feed serializers and are never
 * flushed (fulfilment-sql.ts); `em.map` of the same rows cost the fulfilment about half its own CPU.
 */
import type { EntityManager } from '../../kit/db.ts';

type Json = Record<string, unknown>;
type Mapper = (row: Json, refs: Json) => Json;

const mappers = new WeakMap<object, Mapper>();

function mapperOf(em: EntityManager, entity: object): Mapper {
  let m = mappers.get(entity);
  if (m) return m;
  const meta = em.getMetadata().find(entity as never);
  if (!meta) throw new Error('plainOf: not an entity');
  const steps: ((row: Json, refs: Json, out: Json) => void)[] = [];
  for (const p of meta.props) {
    const column = p.fieldNames?.[0];
    if (!column || p.persist === false) continue;
    const name = p.name as string;
    if (p.kind === 'm:1' || (p.kind === '1:1' && p.owner)) {
      steps.push((row, refs, out) => {
        const v = row[column];
        out[name] = refs[name] ?? (v == null ? null : { id: v });
      });
    } else if (p.kind === 'scalar' && p.runtimeType === 'Date') {
      steps.push((row, _refs, out) => {
        const v = row[column];
        out[name] = v == null ? null : new Date(v as string);
      });
    } else if (p.kind === 'scalar' && p.type === 'DecimalType') {
      steps.push((row, _refs, out) => {
        const v = row[column];
        out[name] = v == null ? null : String(v);
      });
    } else if (p.kind === 'scalar') {
      steps.push((row, _refs, out) => {
        out[name] = row[column] ?? null;
      });
    }
  }
  m = (row, refs) => {
    const out: Json = {};
    for (const step of steps) step(row, refs, out);
    return out;
  };
  mappers.set(entity, m);
  return m;
}

/** `row` (snake_case columns, as `to_jsonb` gives them) as a plain object of `entity`'s shape; `refs` fills its many-to-one properties. */
export function plainOf<T>(em: EntityManager, entity: { prototype: T } | object, row: Json, refs: Json = {}): T {
  return mapperOf(em, entity)(row, refs) as T;
}
