/**
 * Issue #20: the list reads of products, benefits, customers, orders and subscriptions (answered by
 * SQL built for them) with edge values in `limit`, `page`, `sorting` and their filters: 64-bit and
 * larger integers, unknown enum values, repeated parameters, empty strings, text outside ASCII and
 * LIKE's own characters. Each is either a page in the list shape or a 422 at that parameter, never 5xx.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, seller, startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import { ORGANIZATION_TOKEN_SCOPES } from '../../api/src/kit/scopes.ts';

const LISTS = ['/v1/products/', '/v1/benefits/', '/v1/customers/', '/v1/orders/', '/v1/subscriptions/'] as const;

/** A query string and what it must answer: `ok` a page, or a 422 whose issues include this parameter. */
type Case = [query: string, expected: 'ok' | string];

/** Cases every list takes: pagination and sorting. */
const COMMON: Case[] = [
  ['limit=9007199254740993', 'limit'],
  ['limit=99999999999999999999999999', 'limit'],
  ['limit=-1', 'limit'],
  ['limit=0', 'limit'],
  ['limit=', 'limit'],
  ['limit=1.5', 'limit'],
  ['limit=%D9%A1%D9%A0', 'limit'], // Arabic-Indic digits "١٠"
  ['limit=NaN', 'limit'],
  ['limit=1&limit=2', 'limit'],
  ['limit=1000', 'ok'],
  ['page=1000000', 'ok'],
  ['page=1000001', 'page'],
  ['page=9223372036854775808', 'page'],
  ['page=0', 'page'],
  ['page=', 'page'],
  ['page=1&page=2', 'page'],
  ['sorting=-no_such_key', 'sorting'],
  ['sorting=', 'sorting'],
  ['sorting=%E5%90%8D%E5%89%8D', 'sorting'], // "名前"
  ['sorting=--created_at', 'sorting'],
  ['organization_id=', 'organization_id'],
  ['organization_id=not-a-uuid', 'organization_id'],
  ['organization_id=00000000-0000-0000-0000-00000000000%C3%A9', 'organization_id'],
];

/** Filters of each list. */
const PER_LIST: Record<(typeof LISTS)[number], Case[]> = {
  '/v1/products/': [
    ['sorting=-price_amount&sorting=name&sorting=-price_amount', 'ok'],
    ['query=', 'ok'],
    ['query=%5C', 'ok'], // a lone backslash: LIKE's escape character
    ['query=%25_%5C%25', 'ok'],
    ['query=%F0%9F%92%A1%20l%C3%A1mpara', 'ok'],
    [`query=${'x'.repeat(5000)}`, 'ok'],
    ['is_archived=maybe', 'is_archived'],
    ['is_archived=', 'is_archived'],
    ['is_archived=true&is_archived=false', 'is_archived'],
    ['is_recurring=TRUE', 'is_recurring'],
    ['id=00000000-0000-4000-8000-000000000000&id=00000000-0000-4000-8000-000000000001', 'ok'],
    ['id=', 'id'],
    ['benefit_id=x', 'benefit_id'],
  ],
  '/v1/benefits/': [
    ['sorting=description&sorting=-created_at', 'ok'],
    ['type=custom&type=license_keys', 'ok'],
    ['type=no_such_type', 'type'],
    ['type=', 'type'],
    ['query=%5C', 'ok'],
    ['query=%F0%9F%92%A1', 'ok'],
  ],
  '/v1/customers/': [
    ['sorting=email&sorting=-name', 'ok'],
    ['query=', 'ok'],
    ['query=%5C', 'ok'],
    ['query=%25%5C_', 'ok'],
    ['query=%F0%9F%98%80%C3%A9', 'ok'],
    ['email=', 'ok'],
    ['email=%5C', 'ok'],
    ['metadata%5Bplan%5D=pro', 'ok'],
    ['metadata%5Bplan%5D=pro&metadata%5Bplan%5D=team', 'ok'],
    ['metadata%5B%5D=pro', 'metadata'],
    [`metadata%5B${'k'.repeat(41)}%5D=pro`, 'metadata'],
  ],
  '/v1/orders/': [
    ['sorting=-amount&sorting=customer&sorting=product&sorting=discount&sorting=subscription', 'ok'],
    ['product_billing_type=one_time&product_billing_type=recurring', 'ok'],
    ['product_billing_type=weekly', 'product_billing_type'],
    ['product_price_type=', 'product_price_type'],
    ['customer_id=00000000-0000-4000-8000-000000000000', 'ok'],
    ['customer_id=%F0%9F%98%80', 'customer_id'],
  ],
  '/v1/subscriptions/': [
    ['sorting=customer&sorting=-status&sorting=current_period_end&sorting=amount', 'ok'],
    ['active=1', 'ok'],
    ['active=yes', 'active'],
    ['active=', 'active'],
    ['active=true&active=false', 'active'],
    ['product_id=x&product_id=00000000-0000-4000-8000-000000000000', 'product_id'],
  ],
};

describe('list reads with edge values in their query', () => {
  let server: TestServer;
  let s: Awaited<ReturnType<typeof seller>>;
  const get = async (path: string) => {
    const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${s.token}` } });
    return { status: res.status, body: await json(res) };
  };

  beforeAll(async () => {
    server = await startTestServer({ worker: false, env: { RATE_LIMIT_ENABLED: 'false' } });
    s = await seller(server.url, [...ORGANIZATION_TOKEN_SCOPES]);
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${s.token}` },
        body: JSON.stringify(body),
      });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(201);
    };
    // Rows whose text holds LIKE's characters and text outside ASCII, so that a search has something to match.
    await post('/v1/products/', { name: '100% _cotton_ \\ lámpara 💡', prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }] });
    await post('/v1/benefits/', { type: 'custom', description: 'Support 💡 100% \\ _', properties: { note: null } });
    await post('/v1/customers/', { email: uniqueEmail('edge'), name: 'Zoë 100% \\ _', metadata: { plan: 'pro' } });
  });
  afterAll(() => server?.close());

  for (const path of LISTS) {
    it(`${path} answers a page or a 422 at the parameter`, { timeout: 120_000 }, async () => {
      const cases = [...COMMON, ...PER_LIST[path]];
      const answers: string[] = [];
      const expected: string[] = [];
      for (const [query, want] of cases) {
        const r = await get(`${path}?${query}`);
        const q = query.length > 80 ? `${query.slice(0, 80)}…` : query;
        expected.push(`${q} → ${want === 'ok' ? 200 : `422 ${want}`}`);
        if (r.status === 200) {
          const shape = Array.isArray(r.body.items) && Number.isInteger(r.body.pagination?.total_count);
          answers.push(`${q} → ${shape ? 200 : `200 without the list shape ${JSON.stringify(r.body).slice(0, 200)}`}`);
        } else if (r.status === 422 && r.body.error === 'RequestValidationError') {
          const params = [...new Set((r.body.detail as { loc: unknown[] }[]).map((d) => String(d.loc[1])))];
          answers.push(`${q} → 422 ${params.includes(want) ? want : params.join(',')}`);
        } else {
          answers.push(`${q} → ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        }
      }
      expect(answers).toEqual(expected);
    });
  }

  it('a search with LIKE characters finds the row that holds them, and only as text', async () => {
    const found = await get(`/v1/products/?query=${encodeURIComponent('100% _cotton_ \\')}`);
    expect(found.status).toBe(200);
    expect(found.body.items.map((p: { name: string }) => p.name)).toEqual(['100% _cotton_ \\ lámpara 💡']);
    const none = await get(`/v1/products/?query=${encodeURIComponent('100_')}`);
    expect(none.status).toBe(200);
    expect(none.body.items).toEqual([]);
    const customers = await get(`/v1/customers/?query=${encodeURIComponent('% \\ _')}`);
    expect(customers.status).toBe(200);
    expect(customers.body.items.map((c: { name: string }) => c.name)).toEqual(['Zoë 100% \\ _']);
  });
});
