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
