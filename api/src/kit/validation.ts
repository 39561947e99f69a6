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

/**
 * One pattern each (shown in the OpenAPI document): a year from 1900 to 9999 and, for date-times, an
 * offset JavaScript can read (`+99:99` passes zod's own format and made an Invalid Date, a 500). zod's
 * format check still runs after it (a 30 February is refused), unseen by the document.
 */
const DATE = '(?:19\\d\\d|[2-9]\\d\\d\\d)-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\\d|3[01])';
const DATE_PATTERN = new RegExp(`^${DATE}$`);
const DATE_TIME_PATTERN = new RegExp(
  `^${DATE}T(?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d+)?)?(?:Z|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)$`,
);
const isoDateCheck = z.iso.date();
const isoDateTimeCheck = z.iso.datetime({ offset: true });

/** `YYYY-MM-DD` with a year from 1900 to 9999. */
export const isoDate = () =>
  z
    .string()
    .regex(DATE_PATTERN, { message: `Must be a date (YYYY-MM-DD) from ${MIN_YEAR} to ${MAX_YEAR}`, abort: true })
    .refine((v) => isoDateCheck.safeParse(v).success, { message: 'Invalid date' });

/** An ISO 8601 date-time with an offset (`Z` or `+02:00`), a year from 1900 to 9999. */
export const isoDateTime = () =>
  z
    .string()
    .regex(DATE_TIME_PATTERN, {
      message: `Must be a date-time with an offset (Z or +hh:mm) from ${MIN_YEAR} to ${MAX_YEAR}`,
      abort: true,
    })
    .refine((v) => isoDateTimeCheck.safeParse(v).success, { message: 'Invalid ISO datetime' });
