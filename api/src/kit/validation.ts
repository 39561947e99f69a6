/** Edge validation: zod schemas for path, query and body, failures turned into 422 with `loc`. */
import { z } from 'zod/v4';
import { RequestValidationError, type ValidationIssue } from './errors.ts';

export type Where = 'body' | 'query' | 'path';

export function toIssues(where: Where, error: z.ZodError, input: unknown): ValidationIssue[] {
  return error.issues.map((issue) => {
    const loc = [where, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    let value: unknown = input;
    for (const key of issue.path) {
      value = value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
    }
    const missing = issue.code === 'invalid_type' && value === undefined;
    return {
      type: missing ? 'missing' : issue.code,
      loc,
      msg: missing ? 'Field required' : issue.message,
      ...(missing ? {} : { input: value }),
    };
  });
}

export function parseOrThrow<S extends z.ZodType>(where: Where, schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new RequestValidationError(toIssues(where, result.error, input));
  return result.data;
}

/** A query parameter that may be given once or repeated (`?a=1&a=2`), always read as an array. */
export function queryList<T extends z.ZodType>(item: T) {
  return z.preprocess((v) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]), z.array(item));
}

/** Metadata: string keys to string, integer or boolean values (floats refused), as in the public API. */
export const metadataSchema = z
  .record(
    z.string().min(1).max(40),
    z.union([z.string().max(500), z.number().int(), z.boolean()]),
  )
  .refine((m) => Object.keys(m).length <= 50, { message: 'at most 50 keys' });

/** Largest value of a PostgreSQL `integer` (int4) column. */
export const INT32_MAX = 2_147_483_647;
export const INT32_MIN = -2_147_483_648;

/**
 * An integer that fits an int4 column: anything larger (a 64-bit id, 9007199254740990) is a 422 at
 * the edge instead of a database error; the bounds appear in the OpenAPI document.
 */
export const int32 = () => z.number().int().min(INT32_MIN).max(INT32_MAX);

/** An amount in minor units (cents) stored in an int4 column: 0 to 2,147,483,647. */
export const money = () => z.number().int().min(0).max(INT32_MAX);

/** Dates and date-times outside these years are refused (PostgreSQL and JavaScript disagree on older ones). */
export const MIN_YEAR = 1900;
export const MAX_YEAR = 9999;

/** A pattern (so it is in the OpenAPI document too) for a leading year from 1900 to 9999. */
const YEAR_IN_RANGE = /^(?:19\d\d|[2-9]\d\d\d)-/;
const yearMessage = `The year must be between ${MIN_YEAR} and ${MAX_YEAR}`;

/** `YYYY-MM-DD` with a year from 1900 to 9999. */
export const isoDate = () => z.iso.date().regex(YEAR_IN_RANGE, yearMessage);

/** An offset JavaScript can read: hours 00-23 (`+99:99` passes zod's format and makes an Invalid Date). */
const OFFSET_IN_RANGE = /(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

/** An ISO 8601 date-time with an offset (`Z` or `+02:00`) and a year from 1900 to 9999. */
export const isoDateTime = () =>
  z.iso
    .datetime({ offset: true })
    .regex(YEAR_IN_RANGE, yearMessage)
    .regex(OFFSET_IN_RANGE, 'The offset must be Z or from -23:59 to +23:59');
