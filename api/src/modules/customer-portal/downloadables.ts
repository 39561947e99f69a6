/**
 * The customer's downloadable files (`/v1/customer-portal/downloadables/`): one entry per file of each
 * granted `downloadables` benefit grant (`properties.files`), whose `file.download.url` is a
 * short-lived signed link `GET /v1/customer-portal/downloadables/{token}` (no credentials) that
 * redirects (302) to a presigned URL of the object store. Token: `<payload>.<signature>`
 * (base64url JSON `{c: customer, b: benefit, f: file, e: expiry}`, HMAC-SHA256 with the server secret);
 * malformed or tampered → 400, expired → 410, no longer granted / deleted file → 404.
 */
import { createHash, createHmac } from 'node:crypto';
import { z } from 'zod/v4';
import { BadRequest, ResourceNotFound, ResourceUnavailable } from '../../kit/errors.ts';
import { paginated, paginationQuery } from '../../kit/pagination.ts';
import type { CustomerPrincipal } from '../../kit/principals.ts';
import { route } from '../../kit/routes.ts';
import { constantTimeEqual } from '../../kit/crypto.ts';
import { queryList } from '../../kit/validation.ts';
import type { EntityManager } from '../../kit/db.ts';
import { BenefitGrant } from '../benefits/grants.ts';
import { File } from '../files/entities.ts';
import { downloadableFileSchema, sizeReadable } from '../files/schemas.ts';
import { checkoutScope, withinScope } from './scope.ts';

/** Presigned object URLs behind a token live this long (the token itself: DOWNLOADABLE_URL_TTL_SECONDS). */
const OBJECT_URL_TTL = 60;

export interface DownloadTokenPayload {
  /** customer id */
  c: string;
  /** benefit id */
  b: string;
  /** file id */
  f: string;
  /** expiry, unix seconds */
  e: number;
}

const payloadSchema = z.object({ c: z.uuid(), b: z.uuid(), f: z.uuid(), e: z.number().int() });

const sign = (secret: string, data: string) => createHmac('sha256', `downloadables:${secret}`).update(data).digest('base64url');

export function signDownloadToken(secret: string, payload: DownloadTokenPayload): string {
  const data = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${data}.${sign(secret, data)}`;
}

/** The token's payload; 400 BadRequest when malformed or not ours, 410 when expired. */
export function verifyDownloadToken(secret: string, token: string, now = Date.now()): DownloadTokenPayload {
  const [data, sig, ...rest] = token.split('.');
  if (!data || !sig || rest.length || !constantTimeEqual(sig, sign(secret, data))) throw BadRequest('Invalid download token.');
  let parsed: DownloadTokenPayload;
  try {
    parsed = payloadSchema.parse(JSON.parse(Buffer.from(data, 'base64url').toString('utf8')));
  } catch {
    throw BadRequest('Invalid download token.');
  }
  if (parsed.e * 1000 <= now) throw ResourceUnavailable('This download link has expired.');
  return parsed;
}

/** A stable id for (customer, benefit, file), shaped as a UUID. */
export function downloadableId(customerId: string, benefitId: string, fileId: string): string {
  const h = createHash('sha256').update(`${customerId}:${benefitId}:${fileId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

interface Entry {
  benefitId: string;
  file: File;
}

/** The customer's downloadable files: granted `downloadables` grants, live uploaded files, deduplicated. */
export async function customerDownloadables(
  em: EntityManager,
  customerId: string,
  filter: { organizationIds?: string[]; benefitIds?: string[]; grantIds?: string[] } = {},
): Promise<Entry[]> {
  const benefit: Record<string, unknown> = { type: 'downloadables', deletedAt: null };
  if (filter.organizationIds) benefit.organization = { $in: filter.organizationIds };
  if (filter.benefitIds) benefit.id = { $in: filter.benefitIds };
  const grants = await em.find(
    BenefitGrant,
    withinScope({ customer: customerId, grantedAt: { $ne: null }, benefit }, filter.grantIds),
    { orderBy: [{ grantedAt: 'asc' }, { id: 'asc' }] },
  );
  const pairs: { benefitId: string; fileId: string }[] = [];
  const seen = new Set<string>();
  for (const g of grants) {
    for (const fileId of (g.properties.files ?? []) as string[]) {
      const key = `${g.benefit.id}:${fileId}`;
      if (seen.has(key)) continue;
      seen.add(key);
      pairs.push({ benefitId: g.benefit.id, fileId });
    }
  }
  if (!pairs.length) return [];
  const files = await em.find(File, {
    id: { $in: [...new Set(pairs.map((p) => p.fileId))] },
    service: 'downloadable',
    deletedAt: null,
    isUploaded: true,
  });
  const byId = new Map(files.map((f) => [f.id, f]));
  return pairs.filter((p) => byId.has(p.fileId)).map((p) => ({ benefitId: p.benefitId, file: byId.get(p.fileId)! }));
}

export const downloadableReadSchema = z.object({ id: z.uuid(), benefit_id: z.uuid(), file: downloadableFileSchema });

function serializeDownloadable(entry: Entry, customerId: string, url: string, expiresAt: Date) {
  const f = entry.file;
  return {
    id: downloadableId(customerId, entry.benefitId, f.id),
    benefit_id: entry.benefitId,
    file: {
      id: f.id,
      organization_id: f.organization.id,
      name: f.name,
      path: f.path,
      mime_type: f.mimeType,
      size: f.size,
      storage_version: f.storageVersion ?? null,
      checksum_etag: f.checksumEtag ?? null,
      checksum_sha256_base64: f.checksumSha256Base64 ?? null,
      checksum_sha256_hex: f.checksumSha256Hex ?? null,
      last_modified_at: f.lastModifiedAt?.toISOString() ?? null,
      version: f.version ?? null,
      is_uploaded: f.isUploaded,
      created_at: f.createdAt.toISOString(),
      modified_at: f.modifiedAt?.toISOString() ?? null,
      size_readable: sizeReadable(f.size),
      service: 'downloadable' as const,
      download: { url, headers: {}, expires_at: expiresAt.toISOString() },
    },
  };
}

export const routes = [
  route({
    method: 'get',
    path: '/v1/customer-portal/downloadables/',
    summary: "List the customer's downloadable files, each with a short-lived download link",
    tags: ['customer-portal'],
    auth: { kinds: ['customer'], scopes: ['customer_portal:read'] },
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      benefit_id: queryList(z.uuid()).optional(),
    }),
    response: z.object({
      items: z.array(downloadableReadSchema),
      pagination: z.object({ total_count: z.number().int(), max_page: z.number().int() }),
    }),
    async handler({ query, principal, em, deps }) {
      const { customerId } = principal as CustomerPrincipal;
      const scope = await checkoutScope(em, principal as CustomerPrincipal);
      const all = await customerDownloadables(em, customerId, {
        organizationIds: query.organization_id,
        benefitIds: query.benefit_id,
        grantIds: scope?.grantIds,
      });
      const page = all.slice((query.page - 1) * query.limit, query.page * query.limit);
      const ttl = deps.cfg.DOWNLOADABLE_URL_TTL_SECONDS;
      const expiresAt = new Date(Date.now() + ttl * 1000);
      const base = deps.cfg.PUBLIC_URL.replace(/\/$/, '');
      const items = page.map((entry) => {
        const token = signDownloadToken(deps.cfg.SECRET, {
          c: customerId,
          b: entry.benefitId,
          f: entry.file.id,
          e: Math.floor(expiresAt.getTime() / 1000),
        });
        return serializeDownloadable(entry, customerId, `${base}/v1/customer-portal/downloadables/${token}`, expiresAt);
      });
      return paginated(items, all.length, query);
    },
  }),
  route({
    method: 'get',
    path: '/v1/customer-portal/downloadables/:token',
    summary: 'Download a file through a link from the downloadables list (no credentials; redirects to the file)',
    tags: ['customer-portal'],
    auth: 'public',
    errors: [410],
    params: z.object({ token: z.string().min(1).max(2048) }),
    status: 302,
    async handler({ params, em, deps, res }) {
      const t = verifyDownloadToken(deps.cfg.SECRET, params.token);
      const [entry] = (await customerDownloadables(em, t.c, { benefitIds: [t.b] })).filter((e) => e.file.id === t.f);
      if (!entry) throw ResourceNotFound('Downloadable not found.');
      const url = await deps.storage.client.presignedGetObject(deps.storage.bucket, entry.file.path, OBJECT_URL_TTL, {
        'response-content-disposition': `attachment; filename="${entry.file.name.replace(/["\\\r\n]/g, '_')}"`,
      });
      res.redirect(302, url);
    },
  }),
];
