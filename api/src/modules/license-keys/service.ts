/**
 * License key rules: key format, expiry arithmetic, issuing a key for a grant, and the public
 * validate / activate / deactivate calls. Never commits.
 */
import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import { findAndCountInOneSnapshot, type EntityManager } from '../../kit/db.ts';
import { pageOffset, paginated } from '../../kit/pagination.ts';
import { BadRequest, NotPermitted, ResourceNotFound } from '../../kit/errors.ts';
import type { Benefit } from '../benefits/entities.ts';
import type { Customer } from '../customers/entities.ts';
import type { Principal } from '../../kit/principals.ts';
import { visibleOrganizationIds } from '../organizations/scope.ts';
import { LicenseKey, LicenseKeyActivation } from './entities.ts';
import { serializeLicenseKey, type LicenseKeyUpdate } from './schemas.ts';

export type Timeframe = 'year' | 'month' | 'day';

/** The settings a `license_keys` benefit stores (see benefits/types/license-keys.ts). */
export interface LicenseKeysBenefitProperties {
  prefix: string | null;
  expires: { ttl: number; timeframe: Timeframe } | null;
  activations: { limit: number; enable_customer_admin: boolean } | null;
  limit_usage: number | null;
}

/** Optional upper-cased prefix + "-" + an upper-case UUID4. */
export function generateLicenseKey(prefix?: string | null): string {
  const key = randomUUID().toUpperCase();
  const p = prefix?.trim().toUpperCase();
  return p ? `${p}-${key}` : key;
}

/** "****-" + the key's last 6 characters. */
export function displayKey(key: string): string {
  return `****-${key.slice(-6)}`;
}

/**
 * `from` plus `ttl` calendar years, months or days (UTC). Adding months clamps to the month's last
 * day (Jan 31 + 1 month = Feb 28/29), as calendar arithmetic does.
 */
export function addTimeframe(from: Date, ttl: number, timeframe: Timeframe): Date {
  const d = new Date(from.getTime());
  if (timeframe === 'day') {
    d.setUTCDate(d.getUTCDate() + ttl);
    return d;
  }
  const months = timeframe === 'year' ? ttl * 12 : ttl;
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, lastDay));
  return d;
}

/** The limits a key takes from its benefit: activations, usage and expiry (counted from `now`). */
export function licenseKeyLimits(props: LicenseKeysBenefitProperties, now = new Date()) {
  return {
    limitActivations: props.activations?.limit ?? null,
    limitUsage: props.limit_usage ?? null,
    expiresAt: props.expires ? addTimeframe(now, props.expires.ttl, props.expires.timeframe) : null,
  };
}

/**
 * Issues a new key for `customer` from a `license_keys` benefit, with the benefit's prefix and limits.
 * The key is persisted with the caller's next flush.
 */
export function issueLicenseKey(em: EntityManager, input: { customer: Customer; benefit: Benefit }): LicenseKey {
  const { customer, benefit } = input;
  if (benefit.type !== 'license_keys') throw new Error(`benefit ${benefit.id} is not a license_keys benefit`);
  const props = benefit.properties as unknown as LicenseKeysBenefitProperties;
  const key = generateLicenseKey(props.prefix);
  return em.create(LicenseKey, {
    organization: benefit.organization,
    customer,
    benefit,
    key,
    displayKey: displayKey(key),
    status: 'granted',
    usage: 0,
    validations: 0,
    lastValidatedAt: null,
    ...licenseKeyLimits(props),
  });
}

// ---------------------------------------------------------------------------------------------------
// Public license key calls (validate, activate, deactivate): key + organization id, no credentials.
// Each runs on the caller's transaction and locks the key's row, so concurrent activations never
// exceed the limit and concurrent validations never lose a usage increment.

export interface LicenseKeyValidateInput {
  key: string;
  organization_id: string;
  activation_id?: string | null;
  benefit_id?: string | null;
  customer_id?: string | null;
  increment_usage?: number | null;
  conditions?: Record<string, unknown> | null;
}

export interface LicenseKeyActivateInput {
  key: string;
  organization_id: string;
  label: string;
  conditions?: Record<string, unknown> | null;
  meta?: Record<string, unknown> | null;
}

export interface LicenseKeyDeactivateInput {
  key: string;
  organization_id: string;
  activation_id: string;
}

/** The key of the organization, locked for update (its row only, not its customer's), with its customer; 404 when unknown. */
export async function lockLicenseKeyByKey(em: EntityManager, organizationId: string, key: string): Promise<LicenseKey> {
  const found = await em.findOne(
    LicenseKey,
    { organization: organizationId, key },
    { lockMode: LockMode.PESSIMISTIC_WRITE, lockTableAliases: ['l0'], populate: ['customer'] },
  );
  if (!found) throw ResourceNotFound('License key not found.');
  return found;
}

async function liveActivation(em: EntityManager, key: LicenseKey, activationId: string): Promise<LicenseKeyActivation> {
  const activation = await em.findOne(LicenseKeyActivation, { id: activationId, licenseKey: key, deletedAt: null });
  if (!activation) throw ResourceNotFound('License key activation not found.');
  return activation;
}

/** Same keys and values, key order ignored. */
function sameConditions(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const norm = (o: Record<string, unknown>) => JSON.stringify(Object.keys(o).sort().map((k) => [k, o[k]]));
  return norm(a) === norm(b);
}

/**
 * Validates a key: granted, not expired, the activation (and its conditions), benefit and customer
 * match, else 404; `increment_usage` beyond `limit_usage` is a 400. On success the validation is
 * counted, `last_validated_at` set and the usage added.
 */
export async function validateLicenseKey(
  em: EntityManager,
  input: LicenseKeyValidateInput,
  now = new Date(),
): Promise<{ key: LicenseKey; activation: LicenseKeyActivation | null }> {
  const key = await lockLicenseKeyByKey(em, input.organization_id, input.key);
  if (key.status !== 'granted') throw ResourceNotFound('License key is no longer active.');
  if (key.expiresAt && now >= key.expiresAt) throw ResourceNotFound('License key has expired.');
  let activation: LicenseKeyActivation | null = null;
  if (input.activation_id) {
    activation = await liveActivation(em, key, input.activation_id);
    if (Object.keys(activation.conditions).length && !sameConditions(activation.conditions, input.conditions ?? {})) {
      throw ResourceNotFound('License key does not match required conditions');
    }
  }
  if (input.benefit_id && input.benefit_id !== key.benefit.id) {
    throw ResourceNotFound('License key does not match given benefit.');
  }
  if (input.customer_id && input.customer_id !== key.customer.id) {
    throw ResourceNotFound('License key does not match given user.');
  }
  const increment = input.increment_usage ?? 0;
  if (increment && key.limitUsage != null) {
    const remaining = key.limitUsage - key.usage;
    if (increment > remaining) throw BadRequest(`License key only has ${remaining} more usages.`);
  }
  key.validations += 1;
  key.lastValidatedAt = now;
  if (increment) key.usage += increment;
  return { key, activation };
}

/** Activates a key on one more machine; 403 when the key is not active, takes no activations or is full. */
export async function activateLicenseKey(em: EntityManager, input: LicenseKeyActivateInput, now = new Date()) {
  const key = await lockLicenseKeyByKey(em, input.organization_id, input.key);
  if (key.status !== 'granted') throw NotPermitted('License key is no longer active.');
  if (key.expiresAt && now >= key.expiresAt) throw NotPermitted('License key has expired.');
  if (!key.limitActivations) throw NotPermitted('This license key does not support activations.');
  const live = await em.count(LicenseKeyActivation, { licenseKey: key, deletedAt: null });
  if (live >= key.limitActivations) throw NotPermitted('License key activation limit already reached');
  const activation = em.create(LicenseKeyActivation, {
    licenseKey: key,
    label: input.label,
    meta: input.meta ?? {},
    conditions: input.conditions ?? {},
    deletedAt: null,
  });
  return { key, activation };
}

/** Deactivates (soft-deletes) one live activation of the key; 404 when unknown or already deactivated. */
export async function deactivateLicenseKey(em: EntityManager, input: LicenseKeyDeactivateInput, now = new Date()) {
  const key = await lockLicenseKeyByKey(em, input.organization_id, input.key);
  const activation = await liveActivation(em, key, input.activation_id);
  activation.deletedAt = now;
  return { key, activation };
}

/** A license key of an organization the principal can see, with its customer; 404 otherwise. */
export async function findVisibleLicenseKey(em: EntityManager, principal: Principal, id: string): Promise<LicenseKey> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const key = await em.findOne(LicenseKey, { id, organization: { $in: orgIds } }, { populate: ['customer'] });
  if (!key) throw ResourceNotFound('License key not found');
  return key;
}

/** The seller's PATCH: status, usage, limits, expiry. */
export async function updateLicenseKey(tx: EntityManager, principal: Principal, id: string, body: LicenseKeyUpdate) {
  const key = await findVisibleLicenseKey(tx, principal, id);
  if (body.status != null) key.status = body.status;
  if (body.usage !== undefined) key.usage = body.usage;
  if (body.limit_activations !== undefined) key.limitActivations = body.limit_activations;
  if (body.limit_usage !== undefined) key.limitUsage = body.limit_usage;
  if (body.expires_at !== undefined) key.expiresAt = body.expires_at === null ? null : new Date(body.expires_at);
  await tx.flush();
  return serializeLicenseKey(key);
}

/** A page of the license keys matching `where` (the caller scopes it), newest first. */
export async function licenseKeyPage(em: EntityManager, where: Record<string, unknown>, page: { page: number; limit: number }) {
  const [items, total] = await findAndCountInOneSnapshot(em, LicenseKey, where, {
    populate: ['customer'],
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
    ...pageOffset(page),
  });
  return paginated(items.map(serializeLicenseKey), total, page);
}
