/**
 * Shapes every /v1 route repeats: the list envelope, the seller credential requirement, metadata as
 * read, and the by-id / create / update / delete route declarations with their one transaction.
 */
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { z } from 'zod/v4';
import { inTransaction, type EntityManager } from './db.ts';
import type { AuthRequirement } from './principals.ts';
import { route, type HandlerContext, type RouteSpec } from './routes.ts';

/** `{ items, pagination: { total_count, max_page } }`, the envelope of every list response. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), pagination: z.object({ total_count: z.number().int(), max_page: z.number().int() }) });
}

/** A seller's credential (their session, an organization token or an OAuth2 token) holding every `scopes`. */
export function sellerAuth(...scopes: string[]): AuthRequirement {
  return { kinds: ['user', 'organization', 'oauth2'], scopes };
}

/** Metadata in a read model: string keys to string, number or boolean values. */
export const metadataOutputSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

/** A customer's portal session holding every `scopes`. */
export function customerAuth(...scopes: string[]): AuthRequirement {
  return { kinds: ['customer'], scopes };
}

/** `{ id }` in the path: the one parameter of the by-id routes. */
export const idParams = z.object({ id: z.uuid() });

/**
 * Runs `work` in one transaction (`inTransaction`), then its after-commit callbacks (workflow starts),
 * and answers what `work` returned: the one transaction a write handler opens.
 */
export async function transact<T>(em: EntityManager, work: (tx: EntityManager, afterCommit: AfterCommit) => Promise<T>): Promise<T> {
  const { result, afterCommit } = await inTransaction(em, work);
  await afterCommit();
  return result;
}

export type AfterCommit = (fn: () => Promise<unknown>) => void;

interface RouteBase {
  /** Express-style path; the by-id factories expect `:id` in it. */
  path: string;
  summary: string;
  tags: string[];
  auth: AuthRequirement | 'public';
  errors?: number[];
}
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;
type IdContext<B> = HandlerContext<{ id: string }, undefined, Out<B>>;
/** What a write handler's service call receives besides the transaction. */
export type WriteContext<P, B> = HandlerContext<P, undefined, Out<B>> & { afterCommit: AfterCommit };

/** GET `path` (with `:id`): `read` loads what the caller may see (404 otherwise) and returns its read model. */
export function getByIdRoute(spec: RouteBase & { response: z.ZodType; read: (ctx: IdContext<undefined>) => Promise<unknown> }): RouteSpec {
  const { read, ...rest } = spec;
  return route({ method: 'get', ...rest, params: idParams, handler: (ctx) => read(ctx as IdContext<undefined>) });
}

/** POST `path` with `body`, answering 201 and what `create` returns, inside one transaction. */
export function createRoute<B extends z.ZodType>(
  spec: RouteBase & { body: B; response: z.ZodType; create: (tx: EntityManager, ctx: WriteContext<undefined, B>) => Promise<unknown> },
): RouteSpec {
  const { create, ...rest } = spec;
  return route({ method: 'post', ...rest, status: 201, handler: (ctx) => inOneTransaction(ctx, create) });
}

/** PATCH `path` (with `:id`) with `body`, answering what `update` returns, inside one transaction. */
export function updateRoute<B extends z.ZodType>(
  spec: RouteBase & { body: B; response: z.ZodType; update: (tx: EntityManager, ctx: WriteContext<{ id: string }, B>) => Promise<unknown> },
): RouteSpec {
  const { update, ...rest } = spec;
  return route({ method: 'patch', ...rest, params: idParams, handler: (ctx) => inOneTransaction(ctx, update) });
}

/** DELETE `path` (with `:id`), answering 204 once `remove` has run inside one transaction. */
export function deleteRoute(
  spec: RouteBase & { remove: (tx: EntityManager, ctx: WriteContext<{ id: string }, undefined>) => Promise<unknown> },
): RouteSpec {
  const { remove, ...rest } = spec;
  return route({ method: 'delete', ...rest, params: idParams, status: 204, handler: (ctx) => inOneTransaction(ctx, remove) });
}

function inOneTransaction<C extends HandlerContext<unknown, unknown, unknown>, T>(
  ctx: C,
  work: (tx: EntityManager, ctx: never) => Promise<T>,
): Promise<T> {
  return transact(ctx.em, (tx, afterCommit) => work(tx, { ...ctx, afterCommit } as never));
}

/**
 * Flushes; a violation of the unique index `index` (a concurrent request took the same slug or code
 * between the service's check and the insert) becomes `conflict()`, the same 422 as the check.
 */
export async function flushUnique(tx: EntityManager, index: string, conflict: () => Error): Promise<void> {
  try {
    await tx.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException && String(err.message).includes(index)) throw conflict();
    throw err;
  }
}
