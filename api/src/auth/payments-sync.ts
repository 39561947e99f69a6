/**
 * The payments plugin's user → customer link. The auth service sells for one seller organization
 * (`AUTH_PAYMENTS_ORGANIZATION`, id or slug); every user is a customer there with `external_id` =
 * the user's id. After sign-up and after a user changes, the customer is found by external id, else
 * matched by email (and given the external id), else created; its email and name follow the user's.
 * Webhooks `customer.created` / `customer.updated` go out as for any customer write.
 */
import type { Config } from '../config.ts';
import type { Deps } from '../deps.ts';
import { inTransaction, type EntityManager } from '../kit/db.ts';
import { Customer } from '../modules/customers/entities.ts';
import { createCustomer, emitCustomerEvent, flushCustomer } from '../modules/customers/service.ts';
import { Organization } from '../modules/organizations/entities.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The configured seller organization, or null when payments are not configured (or it does not exist). */
export async function paymentsOrganization(em: EntityManager, cfg: Config): Promise<Organization | null> {
  const ref = cfg.AUTH_PAYMENTS_ORGANIZATION;
  if (!ref) return null;
  return em.findOne(Organization, UUID.test(ref) ? { id: ref } : { slug: ref });
}

export interface SyncedUser {
  id: string;
  email: string;
  name: string | null;
}

/**
 * Creates, matches or updates the customer of `user` in `organization`, in the caller's unit of work
 * (flushed, not committed). Returns the customer and whether anything changed.
 */
export async function upsertUserCustomer(
  em: EntityManager,
  organization: Organization,
  user: SyncedUser,
): Promise<{ customer: Customer; kind: 'created' | 'updated' | null }> {
  const email = user.email.toLowerCase();
  const name = user.name || null;
  const live = { organization: organization.id, deletedAt: null };
  let customer = await em.findOne(Customer, { ...live, externalId: user.id }, { populate: ['organization'] });
  customer ??= await em.findOne(Customer, { ...live, email }, { populate: ['organization'] });
  if (!customer) {
    customer = await createCustomer(em, organization.id, { email, name, external_id: user.id, metadata: {} });
    customer.userId = user.id;
    await flushCustomer(em, { email, external_id: user.id });
    return { customer, kind: 'created' };
  }
  let changed = false;
  if (customer.externalId !== user.id) {
    const taken = await em.count(Customer, { ...live, externalId: user.id, id: { $ne: customer.id } });
    if (!taken) {
      customer.externalId = user.id;
      changed = true;
    }
  }
  if (customer.userId !== user.id) {
    customer.userId = user.id;
    changed = true;
  }
  if (customer.email !== email) {
    const taken = await em.count(Customer, { ...live, email, id: { $ne: customer.id } });
    if (!taken) {
      customer.email = email;
      customer.emailVerified = false;
      changed = true;
    }
  }
  if (name && customer.name !== name) {
    customer.name = name;
    changed = true;
  }
  if (changed) await flushCustomer(em, { email, external_id: user.id });
  return { customer, kind: changed ? 'updated' : null };
}

/**
 * The hook sign-up and user updates call: syncs the user's customer in its own transaction. Does
 * nothing when payments are not configured; a failure is logged and never fails the user's request.
 */
export async function syncCustomerForUser(deps: Deps, user: SyncedUser): Promise<void> {
  if (!deps.cfg.AUTH_PAYMENTS_ORGANIZATION) return;
  try {
    await inTransaction(deps.orm.em.fork() as EntityManager, async (tx) => {
      const organization = await paymentsOrganization(tx, deps.cfg);
      if (!organization) {
        deps.log.warn({ organization: deps.cfg.AUTH_PAYMENTS_ORGANIZATION }, 'payments organization not found; customer not synced');
        return;
      }
      const { customer, kind } = await upsertUserCustomer(tx, organization, user);
      if (kind) {
        emitCustomerEvent(tx, customer, kind);
        await tx.flush();
      }
    });
  } catch (err) {
    deps.log.error({ err, userId: user.id }, 'payments customer sync failed');
  }
}
