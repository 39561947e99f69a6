import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * One `Idempotency-Key` of one caller: what the first request was (method, path and body digest) and,
 * once it answered, its status and JSON body, replayed to later requests with the same key for 24 h.
 */
export const IdempotencyKey = defineEntity({
  name: 'IdempotencyKey',
  tableName: 'idempotency_keys',
  properties: {
    /** Digest of the caller's credential (token or session cookie) or, without one, its address. */
    scope: p.string().length(64).primary(),
    key: p.string().length(255).primary(),
    fingerprint: p.string().length(64),
    /** Null while the first request is still running. */
    status: p.integer().nullable(),
    body: p.json<unknown>().nullable(),
    createdAt: p.datetime().index(),
  },
});
export type IdempotencyKey = InferEntity<typeof IdempotencyKey>;
