/** ORM start-up, migrations and the per-request / per-activity EntityManager fork. */
import { IsolationLevel, MikroORM } from '@mikro-orm/postgresql';
import type { EntityManager, EntityName, FilterQuery, FindOptions, Loaded } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { ormConfig, type EntityList } from '../mikro-orm.config.ts';

export type { EntityManager };

/** Opens the ORM over `entities` (the composition root passes `allEntities` from modules/entities.ts). */
export async function initOrm(cfg: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_MAX'>, entities: EntityList): Promise<MikroORM> {
  return MikroORM.init(ormConfig(cfg, entities));
}

/** Applies every committed migration that has not run yet; returns their names. */
export async function migrate(orm: MikroORM): Promise<string[]> {
  const done = await orm.migrator.up();
  return done.map((m) => m.name);
}

/**
 * Runs `work` in one transaction on a fresh fork and, only after it commits, the callbacks it
 * registered with `afterCommit` (starting workflows, for instance). Nothing runs if it throws.
 */
export async function inTransaction<T>(
  em: EntityManager,
  work: (tx: EntityManager, afterCommit: (fn: () => Promise<unknown>) => void) => Promise<T>,
): Promise<{ result: T; afterCommit: () => Promise<void> }> {
  const callbacks: (() => Promise<unknown>)[] = [];
  const result = await em.transactional((tx) => work(tx, (fn) => callbacks.push(fn)));
  return {
    result,
    afterCommit: async () => {
      for (const fn of callbacks) await fn();
    },
  };
}

/**
 * A page of `entityName` and the number of all rows matching `where`, both read in one snapshot.
 * `em.findAndCount` sends its two statements at once, on two pool connections outside a
 * transaction: a row committed between them was counted but not listed (a page of 8 said
 * `total_count: 9`). Here both run in one read-only REPEATABLE READ transaction, on one
 * connection; inside the caller's own transaction they run there, as that transaction decides.
 */
export function findAndCountInOneSnapshot<Entity extends object, Hint extends string = never, Fields extends string = never, Excludes extends string = never>(
  em: EntityManager,
  entityName: EntityName<Entity>,
  where: FilterQuery<NoInfer<Entity>>,
  options?: FindOptions<Entity, Hint, Fields, Excludes>,
): Promise<[Loaded<Entity, Hint, Fields, Excludes>[], number]> {
  // The casts only drop MikroORM's index hints (`using`), which no caller passes.
  const read = (m: EntityManager) => m.findAndCount(entityName, where as never, options as never) as Promise<[Loaded<Entity, Hint, Fields, Excludes>[], number]>;
  if (em.isInTransaction()) return read(em);
  return em.transactional(read, { isolationLevel: IsolationLevel.REPEATABLE_READ, readOnly: true });
}

/** An ILIKE pattern matching values that contain `text` literally (its `\`, `%` and `_` escaped). */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`;
}
