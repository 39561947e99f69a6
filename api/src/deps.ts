/**
 * The composition root: everything the API and the worker depend on, built once per process from the
 * configuration and passed down explicitly. Nothing else reads `config()` or opens an ORM.
 */
import type { Client } from '@temporalio/client';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import type { Config } from './config.ts';
import { initOrm } from './kit/db.ts';
import { closeGenericPool, existingGenericPool } from './kit/generic-pool.ts';
import { destroyConnections, lentConnections } from './mikro-orm.config.ts';
import { createLogger, type Logger } from './kit/logger.ts';
import { createMailer, type Mailer } from './kit/mail.ts';
import { createStorage, type Storage } from './kit/storage.ts';
import { closeTemporal, connectTemporal } from './kit/temporal.ts';
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
    if (sandboxOrm) await closeOrm(await sandboxOrm, deps.log, 'sandbox processor pool');
  });
  return deps;
}

export async function closeDeps(deps: Deps): Promise<void> {
  await deps.mailer.close();
  await closeTemporal(deps.temporal);
  await closers.get(deps)?.();
  await closeOrm(deps.orm, deps.log, 'database pool');
}

/** How long closing a pool waits for its connections to come back before cutting them. */
const POOL_CLOSE_GRACE_MS = 10_000;

/**
 * Closes `orm`'s pool and its generic-plan pool. Each end() waits for every lent connection: one never given back (a leak,
 * named in the log by the stack that took it when checkouts are traced) would hold shutdown forever,
 * so after POOL_CLOSE_GRACE_MS the remaining connections are cut.
 */
async function closeOrm(orm: MikroORM, log: Logger, what: string): Promise<void> {
  const pool = (await orm.driver.getConnection().getNativeClient()) as Pool;
  const generic = existingGenericPool(pool);
  const closing = Promise.all([orm.close(), closeGenericPool(pool)]);
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    closing.then(() => true),
    new Promise<false>((r) => (timer = setTimeout(() => r(false), POOL_CLOSE_GRACE_MS))),
  ]);
  clearTimeout(timer);
  if (inTime) return;
  log.error(
    { lent: [...lentConnections(pool), ...(generic ? lentConnections(generic) : [])] },
    `${what}: connections not given back ${POOL_CLOSE_GRACE_MS / 1000} s into shutdown; cutting them`,
  );
  destroyConnections(pool);
  if (generic) destroyConnections(generic);
  await closing;
}

/** The connection pools `deps` opened: the ORM's, its generic-plan pool and the sandbox processor's once they have been used. */
export async function depsPools(deps: Deps): Promise<Pool[]> {
  const sandbox = sandboxOrms.get(deps)?.();
  const orms = sandbox ? [deps.orm, await sandbox] : [deps.orm];
  const pools = await Promise.all(orms.map((orm) => orm.driver.getConnection().getNativeClient() as Promise<Pool>));
  return pools.flatMap((p) => [p, existingGenericPool(p)].filter((x): x is Pool => x !== undefined));
}
