/**
 * Direct calls for what is not CRUD (refunds, invoices, customer sessions, metrics, auth service),
 * with the same readable errors as the data provider.
 */
import { HttpError } from 'react-admin';

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type?: string;
}

/** Field path of a validation issue: `['body','prices',0,'price_amount']` → `prices.0.price_amount`. */
export const issuePath = (issue: ValidationIssue): string =>
  Array.isArray(issue.loc) ? issue.loc.filter((_, i) => i > 0 || !['body', 'query', 'path'].includes(String(issue.loc[0]))).join('.') : '';

const humanField = (path: string) => path.replace(/_/g, ' ').replace(/\./g, ' › ');

/** Turns `{error, detail}` (or the auth service's `{message}`) into one readable sentence. */
export function errorMessage(body: unknown, fallback: string): string {
  if (!body || typeof body !== 'object') return fallback;
  const { detail, message } = body as { detail?: unknown; message?: unknown };
  if (typeof detail === 'string' && detail) return detail;
  if (Array.isArray(detail) && detail.length) {
    return (detail as ValidationIssue[])
      .map((issue) => {
        const field = issuePath(issue);
        return field ? `${humanField(field)}: ${issue.msg}` : issue.msg;
      })
      .join('; ');
  }
  if (typeof message === 'string' && message) return message;
  return fallback;
}

/** `{detail: [{loc, msg}]}` → react-admin's submission errors: one message per field, and the whole as a notification. */
export function submissionErrors(body: unknown, message: string): Record<string, unknown> | undefined {
  const detail = body && typeof body === 'object' ? (body as { detail?: unknown }).detail : undefined;
  if (!Array.isArray(detail) || !detail.length) return undefined;
  const errors: Record<string, unknown> = {};
  for (const issue of detail as ValidationIssue[]) {
    const path = issuePath(issue);
    if (path && !(path in errors)) errors[path] = issue.msg;
  }
  return { ...errors, root: { serverError: message } };
}

export class ApiError extends HttpError {}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

type Query = Record<string, string | number | boolean | null | undefined | (string | number)[]>;

export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    for (const item of Array.isArray(v) ? v : [v]) {
      if (item === undefined || item === null || item === '') continue;
      params.append(k, String(item));
    }
  }
  const qs = params.toString();
  return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path;
}

/** JSON call to the API (same origin, session cookie); throws an ApiError with a readable message. */
export async function api<T = unknown>(
  path: string,
  init: { method?: string; body?: unknown; query?: Query; signal?: AbortSignal } = {},
): Promise<T> {
  const res = await fetch(withQuery(path, init.query), {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    credentials: 'include',
    signal: init.signal,
    headers: { Accept: 'application/json', ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const body = await readBody(res);
  if (!res.ok) {
    const message = errorMessage(body, res.statusText || `Request failed (${res.status})`);
    const errors = submissionErrors(body, message);
    throw new ApiError(message, res.status, errors ? { ...(body as object), errors } : body);
  }
  return body as T;
}

/** A call to the auth service (`/api/auth/...`). */
export const authApi = <T = unknown>(path: string, body?: unknown, query?: Query) =>
  api<T>(`/api/auth${path}`, { body, query, method: body === undefined ? 'GET' : 'POST' });

export interface Page<T> {
  items: T[];
  pagination: { total_count: number; max_page: number };
}
