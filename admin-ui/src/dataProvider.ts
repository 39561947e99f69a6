/**
 * ra-data-simple-rest speaking the Polar-style /v1 API.
 *
 * simple-rest builds `GET /v1/products?sort=[..]&range=[..]&filter={..}` and expects a JSON array
 * plus `Content-Range`; the API wants `GET /v1/products/?page=&limit=&sorting=` and answers
 * `{items, pagination}`. The http client below translates both ways; the provider maps resource
 * names to API paths, scopes lists and creates to the selected organization, and overrides the calls
 * whose shape differs (PATCH updates, 204 deletes, getMany without an `id` filter everywhere).
 */
import simpleRestProvider from 'ra-data-simple-rest';
import {
  fetchUtils,
  HttpError,
  type CreateParams,
  type DataProvider,
  type DeleteParams,
  type GetListParams,
  type GetListResult,
  type GetManyParams,
  type GetManyResult,
  type GetOneParams,
  type GetOneResult,
  type GetManyReferenceParams,
  type Identifier,
  type RaRecord,
  type UpdateParams,
  type UpdateResult,
} from 'react-admin';
import { errorMessage, submissionErrors } from './common/api.ts';
import { currentOrganizationId } from './common/organization.ts';

export { errorMessage };

const API_URL = '/v1';
/** The API answers at most 100 items per page. */
const API_MAX_LIMIT = 100;

/** Resource names of the console whose API path differs. */
const PATHS: Record<string, string> = {
  'access-tokens': 'organization-access-tokens',
  'webhook-endpoints': 'webhooks/endpoints',
  'webhook-deliveries': 'webhooks/deliveries',
};
const pathOf = (resource: string) => PATHS[resource] ?? resource;

/** Lists that are not filtered by organization (the organizations themselves, nested lists). */
const UNSCOPED_LISTS = new Set(['organizations']);
/** Create bodies that name their organization (others take it from the product, order, …). */
const SCOPED_CREATES = new Set([
  'products', 'benefits', 'custom-fields', 'discounts', 'customers', 'files', 'meters',
  'webhook-endpoints', 'access-tokens', 'tax-rates',
]);

/** Keys an update must carry even when unchanged (discriminated update bodies). */
const ALWAYS_SENT: Record<string, string[]> = { benefits: ['type'], 'custom-fields': ['type'] };

type Options = fetchUtils.Options;
type JsonResponse = Awaited<ReturnType<typeof fetchUtils.fetchJson>>;

interface ListBody {
  items: unknown[];
  pagination: { total_count: number; max_page: number };
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
  const p = url.searchParams;
  if (!/^\/v1\/[\w/-]+$/.test(url.pathname) || !(p.has('range') || p.has('sort') || p.has('filter'))) return null;

  const out = new URL(url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`, url.origin);
  const [start = 0, end = 9] = parseJson<number[]>(p.get('range'), []);
  const limit = Math.max(1, end - start + 1);
  out.searchParams.set('page', String(Math.floor(start / limit) + 1));
  out.searchParams.set('limit', String(limit));

  const sort = parseJson<[string, 'ASC' | 'DESC'] | null>(p.get('sort'), null);
  if (sort && sort[0]) out.searchParams.set('sorting', `${sort[1] === 'DESC' ? '-' : ''}${sortingKey(sort[0])}`);

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
      const message = errorMessage(error.body, error.message || `Request failed (${error.status})`);
      const errors = submissionErrors(error.body, message);
      throw new HttpError(message, error.status, errors ? { ...(error.body as object), errors } : error.body);
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
  const { json } = await httpClient(`${API_URL}/${pathOf(resource)}/${encodeURIComponent(id)}`, {
    method: 'PATCH',
    body: JSON.stringify(data),
  });
  return json as R;
}

async function attachBenefits(productId: Identifier, benefits: string[]): Promise<RaRecord> {
  const { json } = await httpClient(`${API_URL}/products/${encodeURIComponent(productId)}/benefits`, {
    method: 'POST',
    body: JSON.stringify({ benefits }),
  });
  return json as RaRecord;
}

/** Files have no `GET /v1/files/{id}`: read them through the list's `ids` filter. */
async function filesByIds(ids: Identifier[]): Promise<RaRecord[]> {
  const url = new URL(`${API_URL}/files/`, window.location.origin);
  url.searchParams.set('limit', '100');
  for (const id of ids) url.searchParams.append('ids', String(id));
  const { json } = await httpClient(`${url.pathname}${url.search}`);
  return ((json as { items: RaRecord[] }).items ?? []) as RaRecord[];
}

function scopedFilter(resource: string, filter: Record<string, unknown> = {}): Record<string, unknown> {
  const org = currentOrganizationId();
  return org && !UNSCOPED_LISTS.has(resource) ? { organization_id: org, ...filter } : filter;
}

export const dataProvider: DataProvider = {
  ...base,

  getList: async <R extends RaRecord>(resource: string, params: GetListParams): Promise<GetListResult<R>> => {
    const filter = scopedFilter(resource, params.filter);
    const { page = 1, perPage = 10 } = params.pagination ?? {};
    if (perPage <= API_MAX_LIMIT) return base.getList<R>(pathOf(resource), { ...params, filter });
    // More than the API's page size (exports): read consecutive pages of 100.
    const first = (page - 1) * perPage;
    const data: R[] = [];
    let total = 0;
    for (let p = Math.floor(first / API_MAX_LIMIT) + 1; data.length < perPage; p++) {
      const res = await base.getList<R>(pathOf(resource), { ...params, filter, pagination: { page: p, perPage: API_MAX_LIMIT } });
      total = res.total ?? 0;
      data.push(...res.data);
      if (res.data.length < API_MAX_LIMIT) break;
    }
    return { data: data.slice(0, perPage), total };
  },

  getManyReference: (resource: string, params: GetManyReferenceParams) =>
    base.getManyReference(pathOf(resource), { ...params, filter: scopedFilter(resource, params.filter) }),

  getOne: async <R extends RaRecord>(resource: string, params: GetOneParams<R>): Promise<GetOneResult<R>> => {
    if (resource === 'files') {
      const [file] = await filesByIds([params.id]);
      if (!file) throw new HttpError('This file does not exist.', 404);
      return { data: file as R };
    }
    return base.getOne<R>(pathOf(resource), params);
  },

  // The API has no generic `?id=` filter on every collection: fetch the few records one by one
  // (files, which cannot be read one by one, by their `ids` filter).
  getMany: async <R extends RaRecord>(resource: string, params: GetManyParams<R>): Promise<GetManyResult<R>> => {
    if (resource === 'files') return { data: (await filesByIds(params.ids)) as R[] };
    const records = await Promise.all(
      params.ids.map((id) => base.getOne<R>(pathOf(resource), { id, signal: params.signal }).then(({ data }) => data)),
    );
    return { data: records };
  },

  create: async (resource: string, params: CreateParams) => {
    const org = currentOrganizationId();
    const { benefit_ids: benefitIds, ...body } = params.data as Record<string, unknown>;
    const data = SCOPED_CREATES.has(resource) && org && !body.organization_id ? { organization_id: org, ...body } : body;
    const { json } = await httpClient(`${API_URL}/${pathOf(resource)}`, { method: 'POST', body: JSON.stringify(data) });
    // A product's benefits are set by their own call once the product exists.
    if (resource === 'products' && Array.isArray(benefitIds) && benefitIds.length) {
      return { data: await attachBenefits((json as RaRecord).id, benefitIds as string[]) };
    }
    return { data: json };
  },

  update: async <R extends RaRecord>(resource: string, params: UpdateParams<R>): Promise<UpdateResult<R>> => {
    const { benefit_ids: benefitIds, ...diff } = changes(params.data, params.previousData);
    for (const key of ALWAYS_SENT[resource] ?? []) if (key in params.data) diff[key] = params.data[key];
    let record = Object.keys(diff).length || benefitIds === undefined ? await patch<R>(resource, params.id, diff) : undefined;
    if (resource === 'products' && Array.isArray(benefitIds)) record = (await attachBenefits(params.id, benefitIds as string[])) as R;
    return { data: record as R };
  },

  updateMany: async (resource, params) => {
    const records = await Promise.all(params.ids.map((id) => patch(resource, id, changes(params.data, undefined))));
    return { data: records.map((r) => r.id) };
  },

  // DELETE answers 204 without a body.
  delete: async <R extends RaRecord>(resource: string, params: DeleteParams<R>) => {
    await httpClient(`${API_URL}/${pathOf(resource)}/${encodeURIComponent(params.id)}`, { method: 'DELETE' });
    return { data: (params.previousData ?? { id: params.id }) as R };
  },

  deleteMany: async (resource, params) => {
    for (const id of params.ids) {
      await httpClient(`${API_URL}/${pathOf(resource)}/${encodeURIComponent(id)}`, { method: 'DELETE' });
    }
    return { data: params.ids };
  },
};
