/** Discount rules. Services never commit on their own: the caller's transaction does. */
import { raw } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import { RequestValidationError, ResourceNotFound, fieldError, type ValidationIssue } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import { flushUnique } from '../../kit/route-helpers.ts';
import { Organization } from '../organizations/entities.ts';
import { resolveWriteOrganization, visibleOrganizationIds } from '../organizations/scope.ts';
import { Product } from '../products/entities.ts';
import { CheckoutLink } from '../checkout-links/entities.ts';
import { Discount } from './entities.ts';
import { serializeDiscount, type DiscountCreate, type DiscountOut, type DiscountUpdate } from './schemas.ts';

const CODE_TAKEN = 'A discount with this code already exists.';

/** A live discount the principal can see, with its products; 404 otherwise. */
export async function getVisibleDiscount(em: EntityManager, principal: Principal, id: string): Promise<Discount> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const d = await em.findOne(
    Discount,
    { id, organization: { $in: orgIds }, deletedAt: null },
    { populate: ['products'] },
  );
  if (!d) throw ResourceNotFound('Discount not found');
  return d;
}

async function assertCodeFree(em: EntityManager, organizationId: string, code: string, exceptId?: string) {
  const taken = await em.count(Discount, {
    organization: organizationId,
    deletedAt: null,
    [raw((alias) => `lower(${alias}.code)`)]: code.toLowerCase(),
    ...(exceptId ? { id: { $ne: exceptId } } : {}),
  });
  if (taken) throw fieldError(['body', 'code'], CODE_TAKEN, 'value_error', code);
}

/** Products of the organization with the given ids, in the order given; 422 on `body.products` otherwise. */
async function resolveProducts(em: EntityManager, organizationId: string, ids: string[]): Promise<Product[]> {
  const unique = [...new Set(ids)];
  if (!unique.length) return [];
  const found = await em.find(Product, { id: { $in: unique }, organization: organizationId });
  const byId = new Map(found.map((p) => [p.id, p]));
  const issues: ValidationIssue[] = [];
  ids.forEach((id, i) => {
    if (!byId.has(id)) issues.push({ type: 'value_error', loc: ['body', 'products', i], msg: 'Product not found.', input: id });
  });
  if (issues.length) throw new RequestValidationError(issues);
  return unique.map((id) => byId.get(id)!);
}

/** Flushes; a race on the live-code unique index is the same 422 as the pre-check. */
function flushCode(tx: EntityManager, code: string | null | undefined): Promise<void> {
  return flushUnique(tx, 'discounts_organization_code_live_unique', () => fieldError(['body', 'code'], CODE_TAKEN, 'value_error', code));
}

export async function createDiscount(tx: EntityManager, principal: Principal, input: DiscountCreate): Promise<DiscountOut> {
  const organizationId = await resolveWriteOrganization(tx, principal, input.organization_id);
  if (input.code) await assertCodeFree(tx, organizationId, input.code);
  const products = await resolveProducts(tx, organizationId, input.products ?? []);
  const d = tx.create(Discount, {
    organization: tx.getReference(Organization, organizationId),
    name: input.name,
    code: input.code ?? null,
    type: input.type,
    duration: input.duration,
    durationInMonths: input.duration === 'repeating' ? (input.duration_in_months ?? null) : null,
    amount: input.type === 'fixed' ? (input.amount ?? null) : null,
    currency: input.type === 'fixed' ? (input.currency ?? 'usd') : null,
    basisPoints: input.type === 'percentage' ? (input.basis_points ?? null) : null,
    startsAt: input.starts_at ?? null,
    endsAt: input.ends_at ?? null,
    maxRedemptions: input.max_redemptions ?? null,
    redemptionsCount: 0,
    metadata: input.metadata ?? {},
    deletedAt: null,
  });
  for (const p of products) d.products.add(p);
  await flushCode(tx, input.code);
  return serializeDiscount(d);
}

/**
 * Applies an update. type and duration never change; amount, basis_points and currency are frozen
 * once the discount has been redeemed. `currency` is only read together with `amount` (the SDK always
 * sends `currency: "usd"` on update, so a lone currency is ignored rather than silently applied).
 */
export async function updateDiscount(tx: EntityManager, principal: Principal, id: string, input: DiscountUpdate): Promise<DiscountOut> {
  const d = await getVisibleDiscount(tx, principal, id);
  const issues: ValidationIssue[] = [];
  const issue = (field: string, msg: string, value: unknown) =>
    issues.push({ type: 'value_error', loc: ['body', field], msg, input: value });

  if (input.type != null && input.type !== d.type) issue('type', 'The discount type cannot be changed.', input.type);
  if (input.duration != null && input.duration !== d.duration) {
    issue('duration', 'The discount duration cannot be changed.', input.duration);
  }
  if (input.duration_in_months != null && d.duration !== 'repeating') {
    issue('duration_in_months', 'Only a repeating discount has duration_in_months.', input.duration_in_months);
  }
  const redeemed = d.redemptionsCount > 0;
  const frozen = 'The amount cannot be changed once the discount has been redeemed.';
  if (input.amount != null) {
    if (d.type !== 'fixed') issue('amount', 'A percentage discount has no amount.', input.amount);
    else if (redeemed && input.amount !== d.amount) issue('amount', frozen, input.amount);
    else if (redeemed && input.currency != null && input.currency !== d.currency) issue('currency', frozen, input.currency);
  }
  if (input.basis_points != null) {
    if (d.type !== 'percentage') issue('basis_points', 'A fixed discount has no basis_points.', input.basis_points);
    else if (redeemed && input.basis_points !== d.basisPoints) issue('basis_points', frozen, input.basis_points);
  }
  const startsAt = input.starts_at !== undefined ? input.starts_at : d.startsAt;
  const endsAt = input.ends_at !== undefined ? input.ends_at : d.endsAt;
  if (startsAt && endsAt && endsAt.getTime() <= startsAt.getTime()) {
    issue('ends_at', 'ends_at must be after starts_at', input.ends_at?.toISOString() ?? null);
  }
  if (issues.length) throw new RequestValidationError(issues);

  const organizationId = d.organization.id;
  if (input.code) await assertCodeFree(tx, organizationId, input.code, d.id);
  const products = input.products != null ? await resolveProducts(tx, organizationId, input.products) : null;

  if (input.name != null) d.name = input.name;
  if (input.metadata != null) d.metadata = input.metadata;
  if (input.code !== undefined) d.code = input.code;
  if (input.starts_at !== undefined) d.startsAt = input.starts_at;
  if (input.ends_at !== undefined) d.endsAt = input.ends_at;
  if (input.max_redemptions !== undefined) d.maxRedemptions = input.max_redemptions;
  if (input.duration_in_months != null) d.durationInMonths = input.duration_in_months;
  if (input.amount != null && d.type === 'fixed') {
    d.amount = input.amount;
    if (input.currency != null) d.currency = input.currency;
  }
  if (input.basis_points != null && d.type === 'percentage') d.basisPoints = input.basis_points;
  if (products) d.products.set(products);
  await flushCode(tx, input.code);
  return serializeDiscount(d);
}

/** Soft delete; checkout links that pointed at it lose the discount in the same unit of work. */
export async function deleteDiscount(tx: EntityManager, principal: Principal, id: string): Promise<void> {
  const d = await getVisibleDiscount(tx, principal, id);
  d.deletedAt = new Date();
  await tx.nativeUpdate(CheckoutLink, { discount: d.id }, { discount: null });
}
