/** A small typed client for the public /v1 API (same origin). */

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type?: string;
}

export class ApiError extends Error {
  constructor(
    message: string,
    public readonly status: number,
    public readonly body: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The API's `error` name (`PaymentError`, `ResourceNotFound`, ...). */
  get code(): string | undefined {
    const b = this.body as { error?: unknown } | null;
    return typeof b?.error === 'string' ? b.error : undefined;
  }

  /** 422 issues keyed by their location below the body/query (`customer_email`, `custom_field_data.company`). */
  get fieldErrors(): Record<string, string> {
    const out: Record<string, string> = {};
    const detail = (this.body as { detail?: unknown } | null)?.detail;
    if (this.status !== 422 || !Array.isArray(detail)) return out;
    for (const issue of detail as ValidationIssue[]) {
      const key = Array.isArray(issue.loc) ? issue.loc.slice(1).join('.') : '';
      if (!(key in out)) out[key] = issue.msg;
    }
    return out;
  }
}

/** The API's `{error, detail}`; `detail` is a sentence, or for 422 a list of field issues. */
function detailOf(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const { detail } = body as { detail?: unknown };
  if (typeof detail === 'string' && detail) return detail;
  if (Array.isArray(detail) && detail.length) {
    return (detail as ValidationIssue[])
      .map((i) => (Array.isArray(i.loc) && i.loc.length > 1 ? `${i.loc.slice(1).join('.')}: ${i.msg}` : i.msg))
      .join('; ');
  }
  return undefined;
}

export interface RequestOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string | null | undefined;
  signal?: AbortSignal;
  /** Cookies are left out unless a call needs one set (`same-origin`: the account-connection binding). */
  credentials?: RequestCredentials;
}

export async function request<T>(method: string, path: string, body?: unknown, { token, signal, credentials = 'omit' }: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';

  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      signal,
      credentials,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiError('Could not reach the server. Check your connection and try again.', 0, null);
  }

  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    throw new ApiError(detailOf(parsed) ?? `Request failed (${res.status} ${res.statusText})`.trim(), res.status, parsed);
  }
  return parsed as T;
}

export const getJson = <T>(path: string, opts?: RequestOptions) => request<T>('GET', path, undefined, opts);

export const errorMessage = (e: unknown) => (e instanceof Error ? e.message : 'Something went wrong.');

export interface Page<T> {
  items: T[];
  pagination: { total_count: number; max_page: number };
}
