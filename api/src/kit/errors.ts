/**
 * The /v1 error contract (the public Polar API's): `{"error": "<Name>", "detail": "..."}` with the
 * class's status, and 422 `{"error": "RequestValidationError", "detail": [{type, loc, msg, input?}]}`.
 */
import { boundedInput, boundedKey } from './input-guards.ts';

export class ApiError extends Error {
  constructor(
    public readonly status: number,
    public readonly error: string,
    public readonly detail: string,
  ) {
    super(detail);
    this.name = error;
  }
  toJSON(): Record<string, unknown> {
    return { error: this.error, detail: this.detail };
  }
}

export const Unauthorized = (detail = 'Unauthorized') => new ApiError(401, 'Unauthorized', detail);
export const NotPermitted = (detail = 'Not permitted') => new ApiError(403, 'NotPermitted', detail);
export const ResourceNotFound = (detail = 'Not found') => new ApiError(404, 'ResourceNotFound', detail);
export const BadRequest = (detail: string) => new ApiError(400, 'BadRequest', detail);
export const ResourceAlreadyExists = (detail = 'This resource already exists.') =>
  new ApiError(409, 'ResourceAlreadyExists', detail);
export const ResourceUnavailable = (detail = 'This resource is no longer available.') =>
  new ApiError(410, 'ResourceUnavailable', detail);

export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/**
 * 422 in the validation shape. What it echoes is bounded: at most 50 issues, locations and messages
 * cut short, `input` summarized (`boundedInput`), so an oversized or deeply nested value is never sent back.
 */
export class RequestValidationError extends ApiError {
  public readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[]) {
    const bounded = issues.slice(0, 50).map(boundIssue);
    super(422, 'RequestValidationError', bounded.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
    this.issues = bounded;
  }
  override toJSON(): Record<string, unknown> {
    return { error: this.error, detail: this.issues };
  }
}

function boundIssue(i: ValidationIssue): ValidationIssue {
  return {
    ...i,
    loc: i.loc.slice(0, 20).map((l) => (typeof l === 'string' ? boundedKey(l) : l)),
    msg: i.msg.length > 500 ? `${i.msg.slice(0, 500)}…` : i.msg,
    ...('input' in i ? { input: boundedInput(i.input) } : {}),
    ...(i.ctx ? { ctx: boundedInput(i.ctx) as Record<string, unknown> } : {}),
  };
}

/** A business-rule failure on one field, reported in the validation shape. */
export function fieldError(loc: (string | number)[], msg: string, type = 'value_error', input?: unknown) {
  return new RequestValidationError([{ type, loc, msg, ...(input === undefined ? {} : { input }) }]);
}
