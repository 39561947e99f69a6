import { defineConfig } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { entities } from './entities.ts';
import type { Config } from './config.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

export function ormConfig(cfg: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_MAX'>) {
  return defineConfig({
    clientUrl: cfg.DATABASE_URL,
    entities,
    extensions: [Migrator],
    pool: { min: 0, max: cfg.DATABASE_POOL_MAX },
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
