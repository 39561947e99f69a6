/**
 * Product rules. Services never commit on their own: the caller's transaction does. Every id a body
 * names (meters, files, custom fields, benefits, prices) must belong to the product's organization;
 * all problems of one request are collected and reported together as a 422, before anything is
 * written.
 */
import { containsPattern, type EntityManager } from '../../kit/db.ts';
import { RequestValidationError, type ValidationIssue } from '../../kit/errors.ts';
import { Organization } from '../organizations/entities.ts';
import { Meter } from '../meters/entities.ts';
import { File } from '../files/entities.ts';
import { CustomField } from '../custom-fields/entities.ts';
import { Benefit } from '../benefits/entities.ts';
import { Product, ProductBenefit, ProductCustomField, ProductMedia, ProductPrice } from './entities.ts';
import { trialColumns, trialFromInput } from '../trials/index.ts';
import {
  isStaticPrice,
  livePrices,
  type AttachedCustomFieldCreate,
  type ExistingPrice,
  type PriceCreate,
  type ProductCreate,
  type ProductUpdate,
} from './schemas.ts';

type Loc = (string | number)[];
const issue = (loc: Loc, msg: string, input?: unknown): ValidationIssue => ({
  type: 'value_error',
  loc,
  msg,
  ...(input === undefined ? {} : { input }),
});

interface ResolvedPrices {
  kept: ProductPrice[];
  added: { input: PriceCreate; meter: Meter | null }[];
}

/**
 * Checks a product's future price list: existing prices by id (live prices of this product only),
 * new ones, meters of the organization used once each, metered prices only on recurring products,
 * and at most one static (fixed, custom or free) price.
 */
async function resolvePrices(
  em: EntityManager,
  organizationId: string,
  items: (ExistingPrice | PriceCreate)[],
  recurringInterval: string | null,
  product: Product | null,
  errors: ValidationIssue[],
): Promise<ResolvedPrices> {
  const live = product ? livePrices(product) : [];
  const meterIds = items.flatMap((i) => ('amount_type' in i && i.amount_type === 'metered_unit' ? [i.meter_id] : []));
  const meters = meterIds.length
    ? await em.find(Meter, { id: { $in: meterIds }, organization: organizationId })
    : [];
  const kept: ProductPrice[] = [];
  const added: ResolvedPrices['added'] = [];
  const usedMeters = new Set<string>();
  let staticCount = 0;
  const before = errors.length;

  // Existing prices first, so a new metered price reusing a kept price's meter is the one reported.
  items.forEach((item, index) => {
    if ('amount_type' in item) return;
    const price = live.find((p) => p.id === item.id);
    if (!price) {
      errors.push(issue(['body', 'prices', index], 'Price does not exist.', item.id));
      return;
    }
    if (kept.includes(price)) return;
    kept.push(price);
    if (price.meter) usedMeters.add(price.meter.id);
    if (isStaticPrice(price)) staticCount++;
  });
  items.forEach((item, index) => {
    if (!('amount_type' in item)) return;
    if (item.amount_type !== 'metered_unit') {
      staticCount++;
      added.push({ input: item, meter: null });
      return;
    }
    if (!recurringInterval) {
      errors.push(issue(['body', 'prices', index], 'Metered pricing is not supported on one-time products.'));
      return;
    }
    const meter = meters.find((m) => m.id === item.meter_id);
    if (!meter) {
      errors.push(issue(['body', 'prices', index, 'meter_id'], 'Meter does not exist.', item.meter_id));
      return;
    }
    if (usedMeters.has(meter.id)) {
      errors.push(issue(['body', 'prices', index, 'meter_id'], 'Meter is already used for another price.', item.meter_id));
      return;
    }
    usedMeters.add(meter.id);
    added.push({ input: item, meter });
  });
  if (errors.length === before && staticCount > 1) {
    errors.push(issue(['body', 'prices'], 'Only one static price (fixed, custom or free) is allowed.'));
  }
  return { kept, added };
}

function createPrice(em: EntityManager, product: Product, { input, meter }: ResolvedPrices['added'][number]): ProductPrice {
  return em.create(ProductPrice, {
    product,
    amountType: input.amount_type,
    priceCurrency: 'price_currency' in input ? input.price_currency : 'usd',
    priceAmount: input.amount_type === 'fixed' ? input.price_amount : null,
    minimumAmount: input.amount_type === 'custom' ? (input.minimum_amount ?? null) : null,
    maximumAmount: input.amount_type === 'custom' ? (input.maximum_amount ?? null) : null,
    presetAmount: input.amount_type === 'custom' ? (input.preset_amount ?? null) : null,
    meter,
    unitAmount: input.amount_type === 'metered_unit' ? input.unit_amount : null,
    capAmount: input.amount_type === 'metered_unit' ? (input.cap_amount ?? null) : null,
    isArchived: false,
  });
}

/** Uploaded `product_media` files of the organization, in the given order. */
async function resolveMedias(em: EntityManager, organizationId: string, ids: string[], errors: ValidationIssue[]) {
  const files = ids.length
    ? await em.find(File, {
        id: { $in: ids },
        organization: organizationId,
        service: 'product_media',
        isUploaded: true,
        deletedAt: null,
      })
    : [];
  const out: File[] = [];
  ids.forEach((id, index) => {
    const file = files.find((f) => f.id === id);
    if (!file) errors.push(issue(['body', 'medias', index], 'File does not exist or is not yet uploaded.', id));
    else if (out.includes(file)) errors.push(issue(['body', 'medias', index], 'File is listed more than once.', id));
    else out.push(file);
  });
  return out;
}

/** Live custom fields of the organization, each attached once. */
async function resolveCustomFields(
  em: EntityManager,
  organizationId: string,
  items: AttachedCustomFieldCreate[],
  errors: ValidationIssue[],
) {
  const ids = items.map((i) => i.custom_field_id);
  const fields = ids.length
    ? await em.find(CustomField, { id: { $in: ids }, organization: organizationId, deletedAt: null })
    : [];
  const out: { field: CustomField; required: boolean }[] = [];
  items.forEach((item, index) => {
    const field = fields.find((f) => f.id === item.custom_field_id);
    const loc = ['body', 'attached_custom_fields', index, 'custom_field_id'];
    if (!field) errors.push(issue(loc, 'Custom field does not exist.', item.custom_field_id));
    else if (out.some((o) => o.field === field)) errors.push(issue(loc, 'Custom field is attached more than once.', item.custom_field_id));
    else out.push({ field, required: item.required });
  });
  return out;
}

/** Makes `product.medias` exactly `files`, in order, reusing rows for files already attached. */
function syncMedias(em: EntityManager, product: Product, files: File[]) {
  const current = product.medias.getItems();
  for (const link of current) if (!files.includes(link.file)) em.remove(link);
  files.forEach((file, order) => {
    const link = current.find((l) => l.file === file);
    if (link) link.order = order;
    else em.create(ProductMedia, { product, file, order });
  });
}

function syncCustomFields(em: EntityManager, product: Product, fields: { field: CustomField; required: boolean }[]) {
  const current = product.attachedCustomFields.getItems();
  for (const link of current) if (!fields.some((f) => f.field === link.customField)) em.remove(link);
  fields.forEach(({ field, required }, order) => {
    const link = current.find((l) => l.customField === field);
    if (link) Object.assign(link, { order, required });
    else em.create(ProductCustomField, { product, customField: field, order, required });
  });
}

export async function createProduct(em: EntityManager, organizationId: string, input: ProductCreate): Promise<Product> {
  const errors: ValidationIssue[] = [];
  const recurringInterval = input.recurring_interval ?? null;
  const prices = await resolvePrices(em, organizationId, input.prices, recurringInterval, null, errors);
  const trial = trialFromInput(input, recurringInterval != null, errors) ?? null;
  const medias = await resolveMedias(em, organizationId, input.medias ?? [], errors);
  const fields = await resolveCustomFields(em, organizationId, input.attached_custom_fields ?? [], errors);
  if (errors.length) throw new RequestValidationError(errors);

  const product = em.create(Product, {
    organization: em.getReference(Organization, organizationId),
    name: input.name,
    description: input.description ?? null,
    recurringInterval,
    ...trialColumns(trial),
    isArchived: false,
    metadata: input.metadata ?? {},
  });
  for (const p of prices.added) createPrice(em, product, p);
  medias.forEach((file, order) => em.create(ProductMedia, { product, file, order }));
  fields.forEach(({ field, required }, order) =>
    em.create(ProductCustomField, { product, customField: field, order, required }),
  );
  return product;
}

/**
 * Applies a PATCH. `product` must have PRODUCT_POPULATE loaded. Prices: listed `{id}`s are kept, new
 * ones created, the live prices left out are archived (never deleted: orders point at them).
 */
export async function updateProduct(em: EntityManager, product: Product, input: ProductUpdate): Promise<void> {
  const organizationId = product.organization.id;
  const errors: ValidationIssue[] = [];
  if (input.recurring_interval != null && input.recurring_interval !== (product.recurringInterval ?? null)) {
    errors.push(issue(['body', 'recurring_interval'], 'Recurring interval cannot be changed.', input.recurring_interval));
  }
  const prices = input.prices
    ? await resolvePrices(em, organizationId, input.prices, product.recurringInterval ?? null, product, errors)
    : null;
  const trial = trialFromInput(input, product.recurringInterval != null, errors);
  const medias = input.medias ? await resolveMedias(em, organizationId, input.medias, errors) : null;
  const fields = input.attached_custom_fields
    ? await resolveCustomFields(em, organizationId, input.attached_custom_fields, errors)
    : null;
  if (errors.length) throw new RequestValidationError(errors);

  if (input.name != null) product.name = input.name;
  if (input.description !== undefined) product.description = input.description;
  if (input.is_archived != null) product.isArchived = input.is_archived;
  if (trial !== undefined) Object.assign(product, trialColumns(trial));
  if (input.metadata != null) product.metadata = input.metadata;
  if (prices) {
    for (const price of livePrices(product)) if (!prices.kept.includes(price)) price.isArchived = true;
    for (const p of prices.added) createPrice(em, product, p);
  }
  if (medias) syncMedias(em, product, medias);
  if (fields) syncCustomFields(em, product, fields);
}

/**
 * Replaces the product's benefits with `benefitIds` (in that order). Each must be a live, selectable
 * benefit of the product's organization. Returns what changed (the route re-grants from it).
 */
export async function updateProductBenefits(
  em: EntityManager,
  product: Product,
  benefitIds: string[],
): Promise<{ added: Benefit[]; removed: Benefit[] }> {
  const benefits = benefitIds.length
    ? await em.find(Benefit, { id: { $in: benefitIds }, organization: product.organization.id, deletedAt: null })
    : [];
  const current = product.productBenefits.getItems();
  const errors: ValidationIssue[] = [];
  const wanted: Benefit[] = [];
  benefitIds.forEach((id, index) => {
    const benefit = benefits.find((b) => b.id === id);
    if (!benefit) errors.push(issue(['body', 'benefits', index], 'Benefit does not exist.', id));
    else if (wanted.includes(benefit)) errors.push(issue(['body', 'benefits', index], 'Benefit is listed more than once.', id));
    else if (!benefit.selectable && !current.some((l) => l.benefit === benefit)) {
      errors.push(issue(['body', 'benefits', index], 'Benefit is not selectable.', id));
    } else wanted.push(benefit);
  });
  for (const link of current) {
    if (!link.benefit.selectable && !benefitIds.includes(link.benefit.id)) {
      errors.push(issue(['body', 'benefits'], `Benefit ${link.benefit.id} is not selectable and cannot be removed.`));
    }
  }
  if (errors.length) throw new RequestValidationError(errors);

  const removed: Benefit[] = [];
  for (const link of current) {
    if (!wanted.includes(link.benefit)) {
      removed.push(link.benefit);
      em.remove(link);
    }
  }
  const added: Benefit[] = [];
  wanted.forEach((benefit, order) => {
    const link = current.find((l) => l.benefit === benefit);
    if (link) link.order = order;
    else {
      added.push(benefit);
      em.create(ProductBenefit, { product, benefit, order });
    }
  });
  return { added, removed };
}

export interface ProductListFilters {
  organizationIds: string[];
  ids?: string[];
  query?: string;
  isArchived?: boolean;
  isRecurring?: boolean;
  benefitIds?: string[];
}

const SORT_SQL: Record<string, string> = {
  created_at: 'p.created_at',
  name: 'p.name',
  // The product's first live price decides (static price first), as the public API.
  price_amount_type: `case fp.amount_type when 'free' then 1 when 'custom' then 2 when 'fixed' then 3 when 'metered_unit' then 4 end`,
  price_amount: `case fp.amount_type when 'free' then -2 when 'custom' then coalesce(fp.minimum_amount, -1) when 'fixed' then fp.price_amount end`,
};

/**
 * The SQL of a product list: `from` (products `p`, joined to its first live price `fp` when sorting by price),
 * `where` with its `params` (`?` placeholders) and the `sort` expressions of `sorting` (the caller adds `p.id asc` last).
 * `listProductIds` and the list read (`read-sql.ts` `productListQuery`) use it.
 */
export function productListSql(f: ProductListFilters, sorting: string[]): {
  from: string;
  where: string;
  params: unknown[];
  sort: { expr: string; dir: 'asc' | 'desc' }[];
} {
  const where: string[] = [];
  const params: unknown[] = [];
  const inList = (column: string, values: string[]) => {
    if (!values.length) return where.push('false');
    where.push(`${column} in (${values.map(() => '?').join(', ')})`);
    params.push(...values);
  };
  inList('p.organization_id', f.organizationIds);
  if (f.ids) inList('p.id', f.ids);
  if (f.query) {
    where.push(`p.name ilike ?`);
    params.push(containsPattern(f.query));
  }
  if (f.isArchived !== undefined) where.push(`p.is_archived = ${f.isArchived ? 'true' : 'false'}`);
  if (f.isRecurring !== undefined) where.push(`p.recurring_interval is ${f.isRecurring ? 'not null' : 'null'}`);
  if (f.benefitIds) {
    if (!f.benefitIds.length) where.push('false');
    else {
      where.push(
        `exists (select 1 from product_benefits pb where pb.product_id = p.id and pb.benefit_id in (${f.benefitIds.map(() => '?').join(', ')}))`,
      );
      params.push(...f.benefitIds);
    }
  }
  // The first live price is looked up only for the sortings that need it (a lateral per product).
  const byPrice = sorting.some((s) => s.replace(/^-/, '').startsWith('price_'));
  const from = !byPrice
    ? 'products p'
    : `products p
     left join lateral (
       select pp.amount_type, pp.price_amount, pp.minimum_amount from product_prices pp
       where pp.product_id = p.id and pp.is_archived = false
       order by (pp.amount_type <> 'metered_unit') desc, pp.created_at asc, pp.id asc limit 1
     ) fp on true`;
  const sort = sorting.map((s) => ({ expr: SORT_SQL[s.replace(/^-/, '')]!, dir: s.startsWith('-') ? ('desc' as const) : ('asc' as const) }));
  return { from, where: where.join(' and '), params, sort };
}

/** One page of product ids matching the filters, in `sorting` order, and the total count. */
export async function listProductIds(
  em: EntityManager,
  f: ProductListFilters,
  sorting: string[],
  page: { limit: number; offset: number },
): Promise<{ ids: string[]; total: number }> {
  const { from, where, params, sort } = productListSql(f, sorting);
  const orderBy = [...sort.map((c) => `${c.expr} ${c.dir}`), 'p.id asc'].join(', ');
  const rows = await em.execute<{ id: string }[]>(
    `select p.id from ${from} where ${where} order by ${orderBy} limit ? offset ?`,
    [...params, page.limit, page.offset],
  );
  const counted = await em.execute<{ count: string | number }[]>(
    `select count(*) as count from products p where ${where}`,
    params,
  );
  return { ids: rows.map((r) => r.id), total: Number(counted[0]?.count ?? 0) };
}
