/**
 * The composition root: everything the API and the worker depend on, built once per process from the
 * configuration and passed down explicitly. Nothing else reads `config()` or opens an ORM.
 */
import type { Client } from '@temporalio/client';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import type { Config } from './config.ts';
import { initOrm } from './kit/db.ts';
import { createLogger, type Logger } from './kit/logger.ts';
import { createMailer, type Mailer } from './kit/mail.ts';
import { createStorage, type Storage } from './kit/storage.ts';
import { connectTemporal } from './kit/temporal.ts';
import { createIntegrations, type Integrations } from './modules/benefits/integrations.ts';
import { allEntities } from './modules/entities.ts';
import { createProcessor, type PaymentProcessor } from './modules/payments/index.ts';
import { useMediaStorage } from './modules/products/media.ts';

export interface Deps {
  cfg: Config;
  orm: MikroORM;
  temporal: Client;
  storage: Storage;
  mailer: Mailer;
  log: Logger;
  /** The configured card processor (the sandbox keeps its state in this database). */
  processor: PaymentProcessor;
  /** The GitHub and Discord adapters of the benefits. */
  integrations: Integrations;
}

declare module './kit/routes.ts' {
  // Route handlers' `ctx.deps` is this process's Deps.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface HandlerDeps extends Deps {}
}

/** Connections the sandbox processor keeps for itself. */
const SANDBOX_POOL_MAX = 4;

const closers = new WeakMap<Deps, () => Promise<void>>();
const sandboxOrms = new WeakMap<Deps, () => Promise<MikroORM> | undefined>();

export async function createDeps(cfg: Config, name: string): Promise<Deps> {
  const orm = await initOrm(cfg, allEntities);
  const temporal = await connectTemporal(cfg);
  // The sandbox processor's own pool: a confirm holds a transaction (and a connection) while it
  // charges; sharing the main pool would let concurrent confirms starve the processor of connections.
  let sandboxOrm: Promise<MikroORM> | undefined;
  const processor = createProcessor(cfg, () =>
    (sandboxOrm ??= initOrm({ DATABASE_URL: cfg.DATABASE_URL, DATABASE_POOL_MAX: SANDBOX_POOL_MAX }, allEntities)),
  );
  const storage = createStorage(cfg);
  useMediaStorage(storage);
  const deps: Deps = {
    cfg,
    orm,
    temporal,
    storage,
    mailer: createMailer(cfg),
    log: createLogger(cfg, name),
    processor,
    integrations: createIntegrations(cfg),
  };
  sandboxOrms.set(deps, () => sandboxOrm);
  closers.set(deps, async () => {
    if (sandboxOrm) await (await sandboxOrm).close();
  });
  return deps;
}

export async function closeDeps(deps: Deps): Promise<void> {
  await deps.mailer.close();
  await deps.temporal.connection.close();
  await closers.get(deps)?.();
  await deps.orm.close();
}

/** The connection pools `deps` opened: the ORM's, and the sandbox processor's once it has been used. */
export async function depsPools(deps: Deps): Promise<Pool[]> {
  const sandbox = sandboxOrms.get(deps)?.();
  const orms = sandbox ? [deps.orm, await sandbox] : [deps.orm];
  return Promise.all(orms.map((orm) => orm.driver.getConnection().getNativeClient() as Promise<Pool>));
}
