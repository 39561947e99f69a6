import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pool, PoolClient } from 'pg';
import type { Config } from './config.ts';
import { annotateLockConflicts } from './kit/lock-conflicts.ts';

export type EntityList = NonNullable<Options['entities']>;

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * Gives back to the pool a checked-out connection whose socket ended (PostgreSQL restarted or cut
 * it). Kysely's controlled transactions release their connection only after a BEGIN, COMMIT or
 * ROLLBACK succeeds, so a transaction caught by a restart kept its slot forever: after `max` of them
 * the pool was wedged and every request waited out `connectionTimeoutMillis`. The dead client is
 * released with an error (the pool discards it and serves the next waiter with a new connection);
 * the holder's own release later is a no-op.
 */
/** Every pool this process created, for diagnostics (a close that waits names the pool still lending a connection). */
export const createdPools = new Set<Pool>();

/** The connections each pool has lent and not got back, with the stack that took each (when traced). */
const lent = new WeakMap<Pool, Map<PoolClient, string>>();
let traceCheckouts = false;

/**
 * Remembers the stack of every connection checkout from now on (the test harness turns it on), so a
 * connection never given back can be named by the code that took it. Costs an `Error` per checkout.
 */
export function traceConnectionCheckouts(on: boolean): void {
  traceCheckouts = on;
}

/** The connections `pool` has lent and not got back: the stack that took each, when traced. */
export function lentConnections(pool: Pool): string[] {
  return [...(lent.get(pool)?.values() ?? [])];
}

/** Every connection a pool opened and has not finished removing (lent, idle or being closed). */
const open = new WeakMap<Pool, Set<PoolClient>>();

/**
 * Cuts the socket of every connection `pool` still has open, so an `end()` waiting for one (lent
 * and never given back, or a goodbye the server never acknowledged) finishes: a lent one is then
 * released as dead (below). Only for shutdown, once waiting has run out.
 */
export function destroyConnections(pool: Pool): number {
  const clients = [...(open.get(pool) ?? [])];
  for (const c of clients) (c as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  return clients.length;
}

export function releaseDeadConnections(pool: Pool): void {
  createdPools.add(pool);
  const checkedOut = new Map<PoolClient, string>();
  lent.set(pool, checkedOut);
  const clients = new Set<PoolClient>();
  open.set(pool, clients);
  pool.on('remove', (client) => clients.delete(client));
  pool.on('acquire', (client) => checkedOut.set(client, '(checked out; stack not traced)'));
  pool.on('release', (_err, client) => checkedOut.delete(client));
  const connect = pool.connect.bind(pool) as (cb?: unknown) => Promise<PoolClient>;
  pool.connect = ((cb?: unknown) => {
    if (cb || !traceCheckouts) return connect(cb);
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 40;
    const stack = new Error('connection checked out').stack ?? '';
    Error.stackTraceLimit = limit;
    return connect().then((client) => {
      if (checkedOut.has(client)) checkedOut.set(client, stack);
      return client;
    });
  }) as Pool['connect'];
  pool.on('connect', (client) => {
    clients.add(client);
    annotateLockConflicts(client);
    client.once('end', () => {
      if (!checkedOut.has(client)) return;
      const release = client.release;
      client.release = () => {};
      release(new Error('connection ended while checked out'));
    });
  });
}

/** The ORM configuration; the caller passes the entity list (the modules' registry, `modules/entities.ts`). */
export function ormConfig(cfg: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_MAX'>, entities: EntityList) {
  return defineConfig({
    clientUrl: cfg.DATABASE_URL,
    entities,
    extensions: [Migrator],
    pool: { min: 0, max: cfg.DATABASE_POOL_MAX },
    // Waiting for a connection (or for PostgreSQL to accept one) ends after 15 s with an error the API
    // answers 503, instead of holding the request forever while the database restarts.
    driverOptions: { connectionTimeoutMillis: 15_000, onPoolCreated: releaseDeadConnections },
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
