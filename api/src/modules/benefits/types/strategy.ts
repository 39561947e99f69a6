/**
 * One strategy per benefit type (a file each in this folder). A strategy knows:
 * - the shape of the type's properties as a seller sends them (`propertiesSchema`, zod) and as the
 *   read model shows them (`readPropertiesSchema`, `serializeProperties`: write-only values hidden);
 * - `validateProperties`: checks that what the properties reference (files, meters) belongs to the
 *   benefit's organization and returns what to store; failures are 422s under `body.properties`;
 * - `requiresUpdate`: whether a properties change must be re-applied to existing grants;
 * - `grant` / `revoke`: the side effects for one customer, returning the grant's properties
 *   (license key id, granted files, ...). They are idempotent: granting an already granted grant
 *   (`update: true`) refreshes it, revoking twice is harmless. The grant workflow calls them from an
 *   activity, inside its own transaction.
 */
import type { z } from 'zod/v4';
import type { EntityManager } from '../../../kit/db.ts';
import { fieldError } from '../../../kit/errors.ts';
import type { Customer } from '../../customers/entities.ts';
import type { Benefit, BenefitType } from '../entities.ts';
import { IntegrationError, type Integrations } from '../integrations.ts';

export interface PropertiesContext {
  em: EntityManager;
  organizationId: string;
  /** The stored properties when updating an existing benefit. */
  previous?: Record<string, unknown>;
}

export interface GrantContext {
  em: EntityManager;
  /** Third-party adapters (GitHub, Discord) for the types that act outside the database. */
  integrations?: Integrations;
}

export interface GrantInput {
  benefit: Benefit;
  customer: Customer;
  /** The grant's current properties ({} for a new grant). */
  grantProperties: Record<string, unknown>;
  /** True when the grant was already granted and is being refreshed after a benefit change. */
  update?: boolean;
}

export interface BenefitTypeStrategy<P extends Record<string, unknown> = Record<string, unknown>> {
  type: BenefitType;
  propertiesSchema: z.ZodType<P>;
  readPropertiesSchema: z.ZodType;
  validateProperties(ctx: PropertiesContext, input: P): Promise<Record<string, unknown>>;
  serializeProperties(stored: Record<string, unknown>): Record<string, unknown>;
  requiresUpdate(previous: Record<string, unknown>, current: Record<string, unknown>): boolean;
  grant(ctx: GrantContext, input: GrantInput): Promise<Record<string, unknown>>;
  revoke(ctx: GrantContext, input: GrantInput): Promise<Record<string, unknown>>;
  /** A new billing cycle of the subscription a granted grant belongs to (e.g. credit the units again). */
  cycle?(ctx: GrantContext, input: GrantInput): Promise<Record<string, unknown>>;
}

/** A 422 on a field of the benefit's properties (`body.properties.<path>`). */
export function propertiesError(path: (string | number)[], msg: string, input?: unknown) {
  return fieldError(['body', 'properties', ...path], msg, 'value_error', input);
}

/**
 * The grant cannot happen yet and should stay pending (not granted), e.g. no GitHub or Discord account
 * chosen by the customer. `properties` are kept on the grant (account, reason); requesting the grant
 * again (after the customer picks an account) retries.
 */
export class GrantPending extends Error {
  constructor(
    message: string,
    readonly properties: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'GrantPending';
  }
}

/** The context's adapters; a permanent IntegrationError when the caller gave none. */
export function integrationsOf(ctx: GrantContext): Integrations {
  if (!ctx.integrations) throw new IntegrationError('No integrations available in this context', false);
  return ctx.integrations;
}

/** Compares two JSON-like values structurally (key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]));
  }
  return v;
}
