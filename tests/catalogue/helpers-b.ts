/** Helpers for the products, benefits, license keys and custom fields tests. */
import { randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { randomToken, sha256Hex } from '../../api/src/kit/crypto.ts';
import { Organization, OrganizationAccessToken } from '../../api/src/modules/organizations/entities.ts';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { File, type FileService } from '../../api/src/modules/files/entities.ts';
import { Meter } from '../../api/src/modules/meters/entities.ts';
import { OutboxEvent } from '../../api/src/modules/webhooks/entities.ts';
import { uniqueSlug, type TestServer } from '../harness.ts';

export const CATALOGUE_B_SCOPES = [
  'products:read', 'products:write',
  'benefits:read', 'benefits:write',
  'license_keys:read', 'license_keys:write',
  'custom_fields:read', 'custom_fields:write',
];

export interface SellerB {
  organization: { id: string; slug: string };
  token: string;
  polar: Polar;
  /** Raw HTTP with this seller's token. */
  call: (method: string, path: string, body?: unknown) => Promise<Reply>;
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * An organization and a `polar_oat_` token holding `scopes`, with an SDK client on it. Written through
 * the ORM (as `POST /v1/organization-access-tokens/` stores them) so these tests do not depend on the
 * sign-up flow, which has its own tests.
 */
export async function sellerB(srv: TestServer, scopes: string[] = CATALOGUE_B_SCOPES): Promise<SellerB> {
  const em = srv.deps.orm.em.fork();
  const slug = uniqueSlug('cat-b');
  const org = em.create(Organization, {
    name: `Org ${slug}`,
    slug,
    socials: [],
    featureSettings: {},
    subscriptionSettings: {},
    metadata: {},
  });
  const token = randomToken('polar_oat_', 32);
  em.create(OrganizationAccessToken, { organization: org, comment: `test ${randomUUID()}`, tokenHash: sha256Hex(token), scopes });
  await em.flush();
  return {
    organization: { id: org.id, slug: org.slug },
    token,
    polar: new Polar({ accessToken: token, serverURL: srv.url }),
    call: (method, path, body) => call(srv.url, token, method, path, body),
  };
}

export async function call(url: string, token: string | null, method: string, path: string, body?: unknown): Promise<Reply> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`not JSON (${res.status}): ${text.slice(0, 200)}`);
    }
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** A customer of the organization (the customers module has its own tests). */
export async function insertCustomer(srv: TestServer, organizationId: string, email = `buyer-${randomUUID().slice(0, 8)}@example.com`) {
  const em = srv.deps.orm.em.fork();
  const c = em.create(Customer, {
    organization: em.getReference(Organization, organizationId),
    email,
    emailVerified: false,
    name: 'Bea Buyer',
    externalId: null,
    billingAddress: null,
    taxId: null,
    metadata: {},
    userId: null,
    deletedAt: null,
  });
  await em.flush();
  return c;
}

/** A file row as the files module leaves it after an upload (`isUploaded` unless told otherwise). */
export async function insertFile(
  srv: TestServer,
  organizationId: string,
  service: FileService,
  opts: { isUploaded?: boolean; name?: string } = {},
) {
  const em = srv.deps.orm.em.fork();
  const id = randomUUID();
  const f = em.create(File, {
    id,
    organization: em.getReference(Organization, organizationId),
    name: opts.name ?? `${service}-${id.slice(0, 6)}.png`,
    path: `${organizationId}/${id}/${service}.png`,
    mimeType: 'image/png',
    size: 1536,
    service,
    version: null,
    uploadId: null,
    storageVersion: null,
    checksumEtag: 'etag',
    checksumSha256Base64: null,
    checksumSha256Hex: null,
    lastModifiedAt: new Date(),
    isUploaded: opts.isUploaded ?? true,
    isEnabled: true,
    deletedAt: null,
  });
  await em.flush();
  return f;
}

export async function insertMeter(srv: TestServer, organizationId: string, name = 'API calls') {
  const em = srv.deps.orm.em.fork();
  const m = em.create(Meter, {
    organization: em.getReference(Organization, organizationId),
    name,
    filter: { conjunction: 'and', clauses: [] },
    aggregation: { func: 'count' },
    metadata: {},
  });
  await em.flush();
  return m;
}

/** The outbox events of an organization, oldest first, as `[type, data]`. */
export async function outbox(srv: TestServer, organizationId: string, type?: string) {
  const events = await srv.deps.orm.em
    .fork()
    .find(OutboxEvent, { organizationId, ...(type ? { type } : {}) }, { orderBy: { createdAt: 'asc' } });
  return events.map((e) => ({ type: e.type, data: e.data as any }));
}

/** The 422 detail's locations. */
export const locs = (reply: Reply) => (reply.body.detail as { loc: unknown[] }[]).map((d) => d.loc);
