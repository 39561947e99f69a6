/**
 * Passwordless sign-in to the customer portal: a code mailed on request (read from MailDev), exchanged
 * once for a customer session; unknown emails answer the same; codes are stored hashed, expire, and
 * both calls are rate limited.
 */
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, waitForMail, type TestServer } from '../harness.ts';
import { call, insertCustomer, type SellerB } from '../catalogue/helpers-b.ts';
import { CustomerSessionCode } from '../../api/src/modules/customer-portal/sign-in-entities.ts';
import { portalSeller } from './helpers.ts';

let srv: TestServer;
let s: SellerB;
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  s = await portalSeller(srv);
});
afterAll(async () => {
  await srv?.close();
});

/** A made-up client address (the API trusts X-Forwarded-For from loopback), so limits stay per test. */
const ip = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

async function post(path: string, body: unknown, fromIp = ip()) {
  const res = await fetch(`${srv.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': fromIp },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}
const request = (email: string, organization_id = s.organization.id, fromIp?: string) =>
  post('/v1/customer-portal/customer-session/request', { email, organization_id }, fromIp);
const authenticate = (code: string, fromIp?: string) => post('/v1/customer-portal/customer-session/authenticate', { code }, fromIp);

async function mailedCode(email: string, after = 0): Promise<string> {
  for (;;) {
    const mails = await waitForMail(email, 20_000, 'sign-in code');
    if (mails.length > after) {
      const match = /^\s+([A-Z2-9]{8})\s*$/m.exec(mails[mails.length - 1]!.text);
      if (!match) throw new Error(`no code in ${mails[mails.length - 1]!.text}`);
      return match[1]!;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('customer-session request and authenticate', () => {
  it('mails a code that signs the customer in once', async () => {
    const c = await insertCustomer(srv, s.organization.id);
    const r = await request(c.email.toUpperCase());
    expect(r.status).toBe(202);
    const code = await mailedCode(c.email);

    // Stored as a hash only.
    const rows = await srv.deps.orm.em.fork().find(CustomerSessionCode, { customer: c.id });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.codeHash).not.toContain(code);
    expect(rows[0]!.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(15 * 60 * 1000);

    const a = await authenticate(code.toLowerCase().replace(/^(.{4})/, '$1-'));
    expect(a.status).toBe(200);
    expect(a.body.token).toMatch(/^polar_cst_/);
    const me = await call(srv.url, a.body.token, 'GET', '/v1/customer-portal/customers/me');
    expect(me.status).toBe(200);
    expect(me.body.email).toBe(c.email);

    const again = await authenticate(code);
    expect(again.status).toBe(401);
  });

  it('answers 202 for an unknown email and sends nothing', async () => {
    const r = await request('nobody-here@example.com');
    expect(r.status).toBe(202);
    const other = await request('nobody-here@example.com', '00000000-0000-4000-8000-000000000000');
    expect(other.status).toBe(202);
    const rows = await srv.deps.orm.em.fork().count(CustomerSessionCode, { customer: { organization: s.organization.id, email: 'nobody-here@example.com' } });
    expect(rows).toBe(0);
  });

  it('a new request replaces the previous code; an expired code is refused', async () => {
    const c = await insertCustomer(srv, s.organization.id);
    expect((await request(c.email)).status).toBe(202);
    const first = await mailedCode(c.email);
    expect((await request(c.email)).status).toBe(202);
    const second = await mailedCode(c.email, 1);
    expect((await authenticate(first)).status).toBe(401);

    const em = srv.deps.orm.em.fork();
    await em.nativeUpdate(CustomerSessionCode, { customer: c.id }, { expiresAt: new Date(Date.now() - 1000) });
    expect((await authenticate(second)).status).toBe(401);
  });

  it('rate limits requests per email and codes per IP', async () => {
    const c = await insertCustomer(srv, s.organization.id);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await request(c.email, s.organization.id, ip())).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);

    const from = ip();
    const tries: number[] = [];
    for (let i = 0; i < 31; i++) tries.push((await authenticate('WRONGONE', from)).status);
    expect(tries.slice(0, 30).every((t) => t === 401)).toBe(true);
    const last = await authenticate('WRONGONE', from);
    expect(last.status).toBe(429);
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last.body.error).toBe('TooManyRequests');
  });

  it('validates the body', async () => {
    expect((await request('not-an-email')).status).toBe(422);
    expect((await post('/v1/customer-portal/customer-session/authenticate', {})).status).toBe(422);
  });
});
