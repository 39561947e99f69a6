/**
 * ra-data-simple-rest speaking the Polar-style /v1 API.
 *
 * simple-rest builds `GET /v1/products?sort=[..]&range=[..]&filter={..}` and expects a JSON array
 * plus `Content-Range`; the API wants `GET /v1/products/?page=&limit=&sorting=` and answers
 * `{items, pagination}`. The http client below translates both ways; the provider overrides the
 * calls whose shape differs (PATCH updates, getMany without an `id` filter everywhere).
 */
import simpleRestProvider from 'ra-data-simple-rest';
import {
  fetchUtils,
  HttpError,
  type DataProvider,
  type Identifier,
  type RaRecord,
  type UpdateParams,
  type UpdateResult,
} from 'react-admin';

const API_URL = '/v1';

type Options = fetchUtils.Options;
type JsonResponse = Awaited<ReturnType<typeof fetchUtils.fetchJson>>;

interface ListBody {
  items: unknown[];
  pagination: { total_count: number; max_page: number };
}

interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** Turns `{error, detail}` (or Better-Auth's `{message}`) into one readable sentence. */
export function errorMessage(body: unknown, fallback: string): string {
  if (!body || typeof body !== 'object') return fallback;
  const { detail, message } = body as { detail?: unknown; message?: unknown };
  if (typeof detail === 'string' && detail) return detail;
  if (Array.isArray(detail) && detail.length) {
    return (detail as ValidationIssue[])
      .map((issue) => {
        const field = Array.isArray(issue.loc) ? issue.loc.slice(1).join('.') : '';
        return field ? `${field}: ${issue.msg}` : issue.msg;
      })
      .join('; ');
  }
  if (typeof message === 'string' && message) return message;
  return fallback;
}

const toSnakeCase = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** simple-rest sort field → the API's `sorting` key; `id` is random, creation order is what users mean. */
function sortingKey(field: string): string {
  const key = toSnakeCase(field);
  return key === 'id' ? 'created_at' : key;
}

function parseJson<T>(raw: string | null, fallback: T): T {
  if (!raw) return fallback;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return fallback;
  }
}

/** `/v1/products?sort=…&range=…&filter=…` → `/v1/products/?page=…&limit=…&sorting=…&…`, or null if not a list call. */
function translateListUrl(url: URL): { url: URL; start: number } | null {
  const match = /^\/v1\/[\w-]+$/.exec(url.pathname);
  const p = url.searchParams;
  if (!match || !(p.has('range') || p.has('sort') || p.has('filter'))) return null;

  const out = new URL(`${url.pathname}/`, url.origin);
  const [start = 0, end = 9] = parseJson<number[]>(p.get('range'), []);
  const limit = Math.max(1, end - start + 1);
  out.searchParams.set('page', String(Math.floor(start / limit) + 1));
  out.searchParams.set('limit', String(limit));

  const sort = parseJson<[string, 'ASC' | 'DESC'] | null>(p.get('sort'), null);
  if (sort) out.searchParams.set('sorting', `${sort[1] === 'DESC' ? '-' : ''}${sortingKey(sort[0])}`);

  const filter = parseJson<Record<string, unknown>>(p.get('filter'), {});
  for (const [key, value] of Object.entries(filter)) {
    const name = key === 'q' ? 'query' : key;
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v === undefined || v === null || v === '') continue;
      out.searchParams.append(name, typeof v === 'object' ? JSON.stringify(v) : String(v));
    }
  }
  return { url: out, start };
}

export async function httpClient(input: string, options: Options = {}): Promise<JsonResponse> {
  const url = new URL(input, window.location.origin);
  const headers = new Headers(options.headers);
  headers.set('Accept', 'application/json');
  headers.delete('Range'); // simple-rest's hint for Content-Range; the API paginates by query
  const method = (options.method ?? 'GET').toUpperCase();

  const list = method === 'GET' ? translateListUrl(url) : null;
  // Polar collection URLs end with a slash: POST /v1/products/.
  if (method === 'POST' && /^\/v1\/[\w-]+$/.test(url.pathname)) url.pathname += '/';
  const target = list ? list.url : url;

  let response: JsonResponse;
  try {
    response = await fetchUtils.fetchJson(`${target.pathname}${target.search}`, {
      ...options,
      headers,
      credentials: 'include',
    });
  } catch (error) {
    if (error instanceof HttpError) {
      throw new HttpError(errorMessage(error.body, error.message), error.status, error.body);
    }
    throw error;
  }
  if (!list) return response;

  const body = response.json as ListBody;
  const items = body.items ?? [];
  const total = body.pagination?.total_count ?? items.length;
  const range = items.length ? `${list.start}-${list.start + items.length - 1}` : '*';
  const responseHeaders = new Headers(response.headers);
  responseHeaders.set('Content-Range', `items ${range}/${total}`);
  return { ...response, headers: responseHeaders, json: items, body: JSON.stringify(items) };
}

const base = simpleRestProvider(API_URL, httpClient);

/** Only the fields that changed: the API's PATCH rejects read-only fields such as `id`. */
function changes(data: Partial<RaRecord>, previous: Partial<RaRecord> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (key === 'id') continue;
    if (previous && JSON.stringify(previous[key]) === JSON.stringify(value)) continue;
    out[key] = value;
  }
  return out;
}

async function patch<R extends RaRecord>(resource: string, id: Identifier, data: Record<string, unknown>): Promise<R> {
  const { json } = await httpClient(`${API_URL}/${resource}/${encodeURIComponent(id)}`, {
    method: 'PATCH',
    body: JSON.stringify(data),
  });
  return json as R;
}

export const dataProvider: DataProvider = {
  ...base,

  // The API has no generic `?id=` filter on every collection: fetch the few records one by one.
  getMany: async (resource, params) => {
    const records = await Promise.all(
      params.ids.map((id) => base.getOne(resource, { id, signal: params.signal }).then(({ data }) => data)),
    );
    return { data: records };
  },

  update: async <R extends RaRecord>(resource: string, params: UpdateParams<R>): Promise<UpdateResult<R>> => ({
    data: await patch<R>(resource, params.id, changes(params.data, params.previousData)),
  }),

  updateMany: async (resource, params) => {
    const records = await Promise.all(params.ids.map((id) => patch(resource, id, changes(params.data, undefined))));
    return { data: records.map((r) => r.id) };
  },
};
