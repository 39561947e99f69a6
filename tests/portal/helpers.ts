/** Helpers for the customer portal tests: a seller, customers with session tokens, grants and keys. */
import { Polar } from '@polar-sh/sdk';
import { Benefit } from '../../api/src/modules/benefits/entities.ts';
import { BenefitGrant } from '../../api/src/modules/benefits/grants.ts';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { issueLicenseKey } from '../../api/src/modules/license-keys/service.ts';
import type { TestServer } from '../harness.ts';
import { insertCustomer, insertFile, sellerB, type SellerB } from '../catalogue/helpers-b.ts';

export const PORTAL_SELLER_SCOPES = [
  'products:read', 'products:write',
  'benefits:read', 'benefits:write',
  'license_keys:read', 'license_keys:write',
  'customers:read', 'customers:write',
  'customer_sessions:write',
];

export const portalSeller = (srv: TestServer): Promise<SellerB> => sellerB(srv, PORTAL_SELLER_SCOPES);

export interface PortalCustomer {
  id: string;
  email: string;
  token: string;
  /** An SDK client whose access token is the customer session token. */
  polar: Polar;
  /** The `security` argument of the SDK's customer portal calls. */
  security: { customerSession: string };
}

/** A new customer of the seller's organization with a customer session issued through the SDK. */
export async function portalCustomer(srv: TestServer, s: SellerB): Promise<PortalCustomer> {
  const c = await insertCustomer(srv, s.organization.id);
  const session = await s.polar.customerSessions.create({ customerId: c.id });
  return {
    id: c.id,
    email: c.email,
    token: session.token,
    polar: new Polar({ accessToken: session.token, serverURL: srv.url }),
    security: { customerSession: session.token },
  };
}

/** One benefit of each type the SDK's customer grant union knows, created over HTTP. */
export async function benefitsOfEveryType(srv: TestServer, s: SellerB) {
  const file = await insertFile(srv, s.organization.id, 'downloadable');
  const bodies = {
    custom: { type: 'custom', description: 'Priority support', properties: { note: 'Write to vip@example.com' } },
    discord: {
      type: 'discord',
      description: 'Discord role',
      properties: { guild_id: '112233445566778899', role_id: '998877665544332211', guild_token: 'secret-guild-token' },
    },
    downloadables: { type: 'downloadables', description: 'The e-book', properties: { files: [file.id] } },
    github_repository: {
      type: 'github_repository',
      description: 'Source access',
      properties: { repository_owner: 'acme', repository_name: 'engine', permission: 'pull' },
    },
    license_keys: {
      type: 'license_keys',
      description: 'License',
      properties: { prefix: 'pro', expires: null, activations: { limit: 2, enable_customer_admin: true }, limit_usage: 10 },
    },
  } as const;
  const ids = {} as Record<keyof typeof bodies, string>;
  for (const [type, body] of Object.entries(bodies)) {
    const r = await s.call('POST', '/v1/benefits/', body);
    if (r.status !== 201) throw new Error(`benefit ${type}: ${r.status} ${JSON.stringify(r.body)}`);
    ids[type as keyof typeof bodies] = r.body.id;
  }
  return { ids, fileId: file.id };
}

/**
 * A grant of the benefit to the customer, written through the ORM as the grant workflow leaves it
 * (a license_keys grant issues its key). `revoked` leaves it revoked.
 */
export async function insertGrant(
  srv: TestServer,
  customerId: string,
  benefitId: string,
  opts: { revoked?: boolean; orderId?: string; subscriptionId?: string; properties?: Record<string, unknown> } = {},
) {
  const em = srv.deps.orm.em.fork();
  const customer = await em.findOneOrFail(Customer, { id: customerId });
  const benefit = await em.findOneOrFail(Benefit, { id: benefitId });
  let properties = opts.properties ?? {};
  let licenseKeyId: string | undefined;
  if (benefit.type === 'license_keys' && !opts.properties) {
    const key = issueLicenseKey(em, { customer, benefit });
    await em.flush();
    licenseKeyId = key.id;
    properties = { license_key_id: key.id, display_key: key.displayKey };
  }
  if (benefit.type === 'downloadables' && !opts.properties) {
    properties = { files: (benefit.properties.files as string[]) ?? [] };
  }
  const now = new Date();
  const grant = em.create(BenefitGrant, {
    customer,
    benefit,
    subscriptionId: opts.subscriptionId ?? null,
    orderId: opts.orderId ?? null,
    grantedAt: opts.revoked ? null : now,
    revokedAt: opts.revoked ? now : null,
    properties,
  });
  await em.flush();
  return { id: grant.id, licenseKeyId };
}

/** A license key issued to the customer from the benefit (through the service, as a grant does). */
export async function insertLicenseKey(srv: TestServer, customerId: string, benefitId: string) {
  const em = srv.deps.orm.em.fork();
  const key = issueLicenseKey(em, {
    customer: await em.findOneOrFail(Customer, { id: customerId }),
    benefit: await em.findOneOrFail(Benefit, { id: benefitId }),
  });
  await em.flush();
  return key;
}
