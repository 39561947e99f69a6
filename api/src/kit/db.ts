/** ORM start-up, migrations and the per-request / per-activity EntityManager fork. */
import { MikroORM } from '@mikro-orm/postgresql';
import type { EntityManager } from '@mikro-orm/postgresql';
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

/** An ILIKE pattern matching values that contain `text` literally (its `\`, `%` and `_` escaped). */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`;
}
