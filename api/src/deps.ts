/** What the API and the activities depend on, built once per process and passed down explicitly. */
import type { Client } from '@temporalio/client';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from './config.ts';
import { initOrm } from './kit/db.ts';
import { createLogger, type Logger } from './kit/logger.ts';
import { createMailer, type Mailer } from './kit/mail.ts';
import { createStorage, type Storage } from './kit/storage.ts';
import { connectTemporal } from './kit/temporal.ts';

export interface Deps {
  cfg: Config;
  orm: MikroORM;
  temporal: Client;
  storage: Storage;
  mailer: Mailer;
  log: Logger;
}

export async function createDeps(cfg: Config, name: string): Promise<Deps> {
  const orm = await initOrm(cfg);
  const temporal = await connectTemporal(cfg);
  return {
    cfg,
    orm,
    temporal,
    storage: createStorage(cfg),
    mailer: createMailer(cfg),
    log: createLogger(cfg, name),
  };
}

export async function closeDeps(deps: Deps): Promise<void> {
  deps.mailer.close();
  await deps.temporal.connection.close();
  await deps.orm.close();
}
