/** Shared helpers of the files / events / meters / metrics tests. */
import { randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { json, seller, type TestServer } from '../harness.ts';

export const USAGE_SCOPES = [
  'events:read',
  'events:write',
  'meters:read',
  'meters:write',
  'files:read',
  'files:write',
  'metrics:read',
];

export type Seller = Awaited<ReturnType<typeof seller>>;

export async function usageSeller(srv: TestServer, scopes = USAGE_SCOPES) {
  const s = await seller(srv.url, scopes);
  return { ...s, polar: new Polar({ accessToken: s.token, serverURL: srv.url }) };
}

/** A customer row (the customers API belongs to another module; tests seed it through the ORM). */
export async function createCustomer(
  srv: TestServer,
  organizationId: string,
  over: { email?: string; externalId?: string | null; name?: string } = {},
): Promise<{ id: string; email: string; externalId: string | null }> {
  const em = srv.deps.orm.em.fork();
  const c = em.create(Customer, {
    organization: em.getReference(Organization, organizationId),
    email: over.email ?? `buyer-${randomUUID().slice(0, 8)}@example.com`,
    name: over.name ?? 'Bea Buyer',
    externalId: over.externalId ?? null,
    metadata: {},
    billingAddress: null,
    taxId: null,
  });
  await em.flush();
  return { id: c.id, email: c.email, externalId: c.externalId ?? null };
}

/** Raw HTTP with a bearer token; returns the status and the parsed body (null for 204). */
export async function call(
  srv: TestServer,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${srv.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: res.status === 204 ? null : await json(res) };
}

export const iso = (d: Date | string | number) => new Date(d).toISOString();
