import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from './config.ts';

export type EntityList = NonNullable<Options['entities']>;

const here = path.dirname(fileURLToPath(import.meta.url));

/** The ORM configuration; the caller passes the entity list (the modules' registry, `modules/entities.ts`). */
export function ormConfig(cfg: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_MAX'>, entities: EntityList) {
  return defineConfig({
    clientUrl: cfg.DATABASE_URL,
    entities,
    extensions: [Migrator],
    pool: { min: 0, max: cfg.DATABASE_POOL_MAX },
    // Waiting for a connection (or for PostgreSQL to accept one) ends after 15 s with an error the API
    // answers 503, instead of holding the request forever while the database restarts.
    driverOptions: { connectionTimeoutMillis: 15_000 },
    forceUtcTimezone: true,
    migrations: {
      path: path.join(here, 'migrations'),
      glob: '!(*.d).{js,ts}',
      transactional: true,
      snapshot: false,
      emit: 'ts',
    },
    debug: false,
  });
}
