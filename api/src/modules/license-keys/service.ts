/** License key rules: key format, expiry arithmetic, issuing a key for a grant. Never commits. */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '../../kit/db.ts';
import type { Benefit } from '../benefits/entities.ts';
import type { Customer } from '../customers/entities.ts';
import { LicenseKey } from './entities.ts';

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
