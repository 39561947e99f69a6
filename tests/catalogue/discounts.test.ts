/** Discounts through the official SDK (contract) and raw HTTP (errors, isolation). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { Discount } from '../../api/src/modules/discounts/entities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, createProduct, locs, sellerWithSdk } from './helpers-c.ts';

let srv: TestServer;
let a: Awaited<ReturnType<typeof sellerWithSdk>>;
let b: Awaited<ReturnType<typeof sellerWithSdk>>;

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  a = await sellerWithSdk(srv);
  b = await sellerWithSdk(srv);
});
afterAll(async () => {
  await srv?.close();
});

const unique = (tag: string) => `${tag}${Math.random().toString(36).slice(2, 10)}`;

describe('discounts through the SDK', () => {
  it('creates each variant and the SDK parses it as that variant', async () => {
    const pct = await a.polar.discounts.create({
      type: 'percentage',
      duration: 'once',
      basisPoints: 2550,
      name: 'Quarter off',
      code: unique('Q'),
      metadata: { source: 'test', n: 3, on: true },
    });
    expect(pct).toMatchObject({
      type: 'percentage',
      duration: 'once',
      basisPoints: 2550,
      name: 'Quarter off',
      redemptionsCount: 0,
      maxRedemptions: null,
      startsAt: null,
      endsAt: null,
      organizationId: a.organization.id,
      products: [],
      metadata: { source: 'test', n: 3, on: true },
    });
    expect(pct.createdAt).toBeInstanceOf(Date);
    expect('amount' in pct).toBe(false);

    const fixed = await a.polar.discounts.create({
      type: 'fixed',
      duration: 'forever',
      amount: 500,
      currency: 'EUR',
      name: 'Five off',
    });
    expect(fixed).toMatchObject({ type: 'fixed', duration: 'forever', amount: 500, currency: 'eur', code: null });
    expect('basisPoints' in fixed).toBe(false);

    // Repeating discounts are created over raw HTTP: the SDK's first-match union sends them with the
    // once/forever variant, which drops duration_in_months (and the server then asks for it, as Polar does).
    const sdkRep = await a.polar.discounts
      .create({ type: 'fixed', duration: 'repeating', durationInMonths: 3, amount: 100, name: 'SDK repeating' })
      .catch((e: unknown) => e);
    expect(sdkRep).toBeInstanceOf(HTTPValidationError);
    const created = await call(srv.url, a.token, 'POST', '/v1/discounts/', {
      type: 'fixed', duration: 'repeating', duration_in_months: 3, amount: 100, name: 'Three months',
    });
    expect(created.status).toBe(201);
    // The SDK reads it back (its union matches the once/forever shape first and drops duration_in_months).
    const rep = await a.polar.discounts.get({ id: created.body.id });
    expect(rep).toMatchObject({ type: 'fixed', duration: 'repeating', amount: 100, currency: 'usd', name: 'Three months' });
    const raw = await call(srv.url, a.token, 'GET', `/v1/discounts/${rep.id}`);
    expect(raw.body).toMatchObject({ duration: 'repeating', duration_in_months: 3, amount: 100, currency: 'usd' });
    expect(raw.body).not.toHaveProperty('basis_points');
    const pctRep = await call(srv.url, a.token, 'POST', '/v1/discounts/', {
      type: 'percentage',
      duration: 'repeating',
      duration_in_months: 12,
      basis_points: 1000,
      name: 'A year at 10%',
    });
    expect(pctRep.status).toBe(201);
    expect(pctRep.body).toMatchObject({ type: 'percentage', basis_points: 1000, duration_in_months: 12 });
    expect(pctRep.body).not.toHaveProperty('amount');
    expect(pctRep.body).not.toHaveProperty('currency');
  });

  it('restricts a discount to products of the same organization', async () => {
    const p = await createProduct(srv.url, a.token, { name: 'Restricted product' });
    const d = await a.polar.discounts.create({
      type: 'percentage',
      duration: 'forever',
      basisPoints: 1000,
      name: 'Only for one',
      products: [p.id],
    });
    expect(d.products).toHaveLength(1);
    expect(d.products[0]).toMatchObject({ id: p.id, name: 'Restricted product', isArchived: false, isRecurring: false });

    const other = await createProduct(srv.url, b.token);
    const res = await call(srv.url, a.token, 'POST', '/v1/discounts/', {
      type: 'percentage', duration: 'once', basis_points: 100, name: 'x', products: [p.id, other.id],
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('RequestValidationError');
    expect(locs(res.body)).toEqual(['body.products.1']);

    // Emptying the list makes the discount apply to every product again.
    const cleared = await a.polar.discounts.update({ id: d.id, discountUpdate: { products: [] } });
    expect(cleared.products).toEqual([]);
  });

  it('gets, lists (query, sorting), updates and deletes', async () => {
    const tag = unique('L');
    const d1 = await a.polar.discounts.create({ type: 'percentage', duration: 'once', basisPoints: 100, name: `${tag} beta`, code: `${tag}B` });
    const d2 = await a.polar.discounts.create({ type: 'percentage', duration: 'once', basisPoints: 200, name: `${tag} alpha`, code: `${tag}A` });

    expect((await a.polar.discounts.get({ id: d1.id })).id).toBe(d1.id);

    const page = await a.polar.discounts.list({ query: tag, sorting: ['name'] });
    expect(page.result.items.map((d) => d.id)).toEqual([d2.id, d1.id]);
    expect(page.result.pagination).toEqual({ totalCount: 2, maxPage: 1 });
    const byCode = await a.polar.discounts.list({ query: `${tag}b`.toLowerCase(), sorting: ['-code'] });
    expect(byCode.result.items.map((d) => d.id)).toEqual([d1.id]);
    const desc = await a.polar.discounts.list({ organizationId: a.organization.id, query: tag, sorting: ['-name'], limit: 1 });
    expect(desc.result.items.map((d) => d.id)).toEqual([d1.id]);
    expect(desc.result.pagination).toEqual({ totalCount: 2, maxPage: 2 });

    const starts = new Date('2030-01-01T00:00:00Z');
    const ends = new Date('2030-02-01T00:00:00Z');
    const updated = await a.polar.discounts.update({
      id: d1.id,
      discountUpdate: { name: 'Renamed', startsAt: starts, endsAt: ends, maxRedemptions: 5, basisPoints: 300, metadata: { k: 'v' } },
    });
    expect(updated).toMatchObject({ name: 'Renamed', basisPoints: 300, maxRedemptions: 5, metadata: { k: 'v' } });
    expect(updated.startsAt?.toISOString()).toBe(starts.toISOString());
    expect(updated.endsAt?.toISOString()).toBe(ends.toISOString());
    expect(updated.modifiedAt).toBeInstanceOf(Date);

    // null clears nullable fields.
    const cleared = await call(srv.url, a.token, 'PATCH', `/v1/discounts/${d1.id}`, { code: null, max_redemptions: null, ends_at: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ code: null, max_redemptions: null, ends_at: null, name: 'Renamed' });

    await a.polar.discounts.delete({ id: d1.id });
    await expect(a.polar.discounts.get({ id: d1.id })).rejects.toBeInstanceOf(ResourceNotFound);
    const after = await a.polar.discounts.list({ query: tag });
    expect(after.result.items.map((d) => d.id)).toEqual([d2.id]);
    expect((await call(srv.url, a.token, 'DELETE', `/v1/discounts/${d1.id}`)).status).toBe(404);
  });

  it('an SDK update of a EUR discount keeps its currency (the SDK always sends currency "usd")', async () => {
    const d = await a.polar.discounts.create({ type: 'fixed', duration: 'once', amount: 700, currency: 'eur', name: 'Euro' });
    const u = await a.polar.discounts.update({ id: d.id, discountUpdate: { name: 'Euro 2' } });
    expect(u).toMatchObject({ name: 'Euro 2', amount: 700, currency: 'eur' });
    const changed = await a.polar.discounts.update({ id: d.id, discountUpdate: { amount: 900, currency: 'gbp' } });
    expect(changed).toMatchObject({ amount: 900, currency: 'gbp' });
  });
});

describe('discount rules (raw HTTP)', () => {
  const base = { type: 'percentage', duration: 'once', basis_points: 1000, name: 'Rule test' };

  it('validates amounts, durations and dates with the field in loc', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, duration: 'repeating' }, 'body.duration_in_months'],
      [{ ...base, duration_in_months: 3 }, 'body.duration_in_months'],
      [{ ...base, duration: 'repeating', duration_in_months: 1000 }, 'body.duration_in_months'],
      [{ ...base, basis_points: 0 }, 'body.basis_points'],
      [{ ...base, basis_points: 10_001 }, 'body.basis_points'],
      [{ ...base, basis_points: 12.5 }, 'body.basis_points'],
      [{ type: 'fixed', duration: 'once', name: 'f' }, 'body.amount'],
      [{ type: 'fixed', duration: 'once', name: 'f', amount: 0 }, 'body.amount'],
      [{ type: 'fixed', duration: 'once', name: 'f', amount: 10, basis_points: 5 }, 'body.basis_points'],
      [{ ...base, amount: 10 }, 'body.amount'],
      [{ ...base, max_redemptions: 0 }, 'body.max_redemptions'],
      [{ ...base, code: 'no spaces!' }, 'body.code'],
      [{ ...base, starts_at: '2030-02-01T00:00:00Z', ends_at: '2030-01-01T00:00:00Z' }, 'body.ends_at'],
      [{ ...base, starts_at: '2030-02-01T00:00:00' }, 'body.starts_at'],
      [{ ...base, metadata: { f: 1.5 } }, 'body.metadata.f'],
      [{ ...base, type: 'bogus' }, 'body.type'],
      [{ ...base, name: undefined }, 'body.name'],
    ];
    for (const [body, loc] of cases) {
      const res = await call(srv.url, a.token, 'POST', '/v1/discounts/', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error).toBe('RequestValidationError');
      expect(locs(res.body), JSON.stringify(body)).toContain(loc);
    }
    // Nothing was written.
    const all = await srv.deps.orm.em.fork().count(Discount, { organization: a.organization.id, name: { $in: ['Rule test', 'f'] } });
    expect(all).toBe(0);
  });

  it('codes are unique per organization, case-insensitively, stored as given, freed on delete', async () => {
    const code = unique('Summer');
    const first = await call(srv.url, a.token, 'POST', '/v1/discounts/', { ...base, code });
    expect(first.status).toBe(201);
    expect(first.body.code).toBe(code);
    const dup = await call(srv.url, a.token, 'POST', '/v1/discounts/', { ...base, code: code.toUpperCase() });
    expect(dup.status).toBe(422);
    expect(locs(dup.body)).toEqual(['body.code']);

    // Another organization may use the same code.
    expect((await call(srv.url, b.token, 'POST', '/v1/discounts/', { ...base, code })).status).toBe(201);

    // Renaming another discount onto the code is refused too.
    const other = await call(srv.url, a.token, 'POST', '/v1/discounts/', base);
    const clash = await call(srv.url, a.token, 'PATCH', `/v1/discounts/${other.body.id}`, { code: code.toLowerCase() });
    expect(clash.status).toBe(422);
    expect(locs(clash.body)).toEqual(['body.code']);

    expect((await call(srv.url, a.token, 'DELETE', `/v1/discounts/${first.body.id}`)).status).toBe(204);
    expect((await call(srv.url, a.token, 'PATCH', `/v1/discounts/${other.body.id}`, { code: code.toLowerCase() })).status).toBe(200);
  });

  it('type and duration never change; amounts freeze after the first redemption', async () => {
    const fixed = (await call(srv.url, a.token, 'POST', '/v1/discounts/', { type: 'fixed', duration: 'once', amount: 300, name: 'Freeze' })).body;
    let res = await call(srv.url, a.token, 'PATCH', `/v1/discounts/${fixed.id}`, { type: 'percentage', basis_points: 100 });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual(expect.arrayContaining(['body.type', 'body.basis_points']));
    res = await call(srv.url, a.token, 'PATCH', `/v1/discounts/${fixed.id}`, { duration: 'forever' });
    expect(locs(res.body)).toEqual(['body.duration']);
    res = await call(srv.url, a.token, 'PATCH', `/v1/discounts/${fixed.id}`, { duration_in_months: 2 });
    expect(locs(res.body)).toEqual(['body.duration_in_months']);
    // Same values are accepted.
    res = await call(srv.url, a.token, 'PATCH', `/v1/discounts/${fixed.id}`, { type: 'fixed', duration: 'once', amount: 400 });
    expect(res.status).toBe(200);
    expect(res.body.amount).toBe(400);

    // A checkout redeemed it (the checkout issue maintains this counter).
    await srv.deps.orm.em.fork().nativeUpdate(Discount, { id: fixed.id }, { redemptionsCount: 1 });
    res = await call(srv.url, a.token, 'PATCH', `/v1/discounts/${fixed.id}`, { amount: 500 });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual(['body.amount']);
    res = await call(srv.url, a.token, 'PATCH', `/v1/discounts/${fixed.id}`, { amount: 400, currency: 'eur' });
    expect(locs(res.body)).toEqual(['body.currency']);
    res = await call(srv.url, a.token, 'PATCH', `/v1/discounts/${fixed.id}`, { amount: 400, name: 'Still editable' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Still editable', amount: 400, redemptions_count: 1 });

    const pct = (await call(srv.url, a.token, 'POST', '/v1/discounts/', { ...base, duration: 'repeating', duration_in_months: 2 })).body;
    await srv.deps.orm.em.fork().nativeUpdate(Discount, { id: pct.id }, { redemptionsCount: 3 });
    res = await call(srv.url, a.token, 'PATCH', `/v1/discounts/${pct.id}`, { basis_points: 2000 });
    expect(locs(res.body)).toEqual(['body.basis_points']);
    res = await call(srv.url, a.token, 'PATCH', `/v1/discounts/${pct.id}`, { duration_in_months: 6 });
    expect(res.status).toBe(200);
    expect(res.body.duration_in_months).toBe(6);
    res = await call(srv.url, a.token, 'PATCH', `/v1/discounts/${pct.id}`, { ends_at: '2000-01-01T00:00:00Z', starts_at: '2001-01-01T00:00:00Z' });
    expect(locs(res.body)).toEqual(['body.ends_at']);
  });

  it('refuses the sorting keys it does not know', async () => {
    const res = await call(srv.url, a.token, 'GET', '/v1/discounts/?sorting=amount');
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual(['query.sorting']);
    expect((await call(srv.url, a.token, 'GET', '/v1/discounts/?sorting=-redemptions_count&sorting=code')).status).toBe(200);
  });
});

describe('discount authorization and tenant isolation', () => {
  it('401 without a token, 403 without the scope', async () => {
    const anon = await call(srv.url, null, 'GET', '/v1/discounts/');
    expect(anon.status).toBe(401);
    expect(anon.body.error).toBe('Unauthorized');
    expect(anon.headers.get('www-authenticate')).toBe('Bearer');
    const readOnly = await sellerWithSdk(srv, ['discounts:read']);
    const res = await call(srv.url, readOnly.token, 'POST', '/v1/discounts/', { type: 'percentage', duration: 'once', basis_points: 1, name: 'x' });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: 'NotPermitted' });
    const none = await sellerWithSdk(srv, ['products:read']);
    expect((await call(srv.url, none.token, 'GET', '/v1/discounts/')).status).toBe(403);
  });

  it("another organization's discounts are 404 and absent from lists", async () => {
    const d = await a.polar.discounts.create({ type: 'percentage', duration: 'once', basisPoints: 100, name: 'Private' });
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const res = await call(srv.url, b.token, method, `/v1/discounts/${d.id}`, method === 'PATCH' ? { name: 'stolen' } : undefined);
      expect(res.status, method).toBe(404);
      expect(res.body).toMatchObject({ error: 'ResourceNotFound' });
    }
    await expect(b.polar.discounts.get({ id: d.id })).rejects.toBeInstanceOf(ResourceNotFound);
    const list = await b.polar.discounts.list({ organizationId: a.organization.id });
    expect(list.result.items).toEqual([]);
    const own = await b.polar.discounts.list({});
    expect(own.result.items.some((x) => x.id === d.id)).toBe(false);
    // Naming the other organization in a body is refused.
    const res = await call(srv.url, b.token, 'POST', '/v1/discounts/', {
      type: 'percentage', duration: 'once', basis_points: 1, name: 'x', organization_id: a.organization.id,
    });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual(['body.organization_id']);
    expect((await a.polar.discounts.get({ id: d.id })).name).toBe('Private');
  });
});
