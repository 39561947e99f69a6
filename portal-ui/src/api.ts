/** A small typed client for the public /v1 API (same origin). */

export class ApiError extends Error {
  constructor(
    message: string,
    public readonly status: number,
    public readonly body: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
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
  token?: string;
  signal?: AbortSignal;
}

export async function getJson<T>(path: string, { token, signal }: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;

  let res: Response;
  try {
    res = await fetch(path, { headers, signal, credentials: 'same-origin' });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiError('Could not reach the server. Check your connection and try again.', 0, null);
  }

  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!res.ok) {
    throw new ApiError(detailOf(body) ?? `Request failed (${res.status} ${res.statusText})`.trim(), res.status, body);
  }
  if (body === null) throw new ApiError('The server sent an unexpected response.', res.status, text);
  return body as T;
}

/** Formats integer minor units (cents) in the currency's own precision, e.g. 1900 usd → "$19.00". */
export function formatMoney(minor: number, currency: string): string {
  const code = currency.toUpperCase();
  try {
    const format = new Intl.NumberFormat(undefined, { style: 'currency', currency: code });
    const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
    return format.format(minor / 10 ** digits);
  } catch {
    return `${code} ${(minor / 100).toFixed(2)}`;
  }
}
