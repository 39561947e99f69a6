/** The columns every table has: a UUID id and creation/modification times (timestamptz). */
import { randomUUID } from 'node:crypto';
import { p } from '@mikro-orm/core';

export const baseProperties = {
  id: p.uuid().primary().onCreate(() => randomUUID()),
  createdAt: p.datetime().onCreate(() => new Date()),
  modifiedAt: p.datetime().nullable().onUpdate(() => new Date()),
};

/** Metadata values are strings, integers or booleans (never floats), as the public API allows. */
export type Metadata = Record<string, string | number | boolean>;
