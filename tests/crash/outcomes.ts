/** What a purchase left behind, counted straight from the database (plain SQL, so it reads every row). */
import type { TestServer } from '../harness.ts';

export interface Outcome {
  checkoutStatus: string;
  orders: number;
  orderStatuses: string[];
  subscriptions: number;
  /** Grants of `benefitId` to the checkout's customer, and how many of them are granted. */
  grants: number;
  grantsGranted: number;
  licenseKeys: number;
  /** Succeeded charges made for the checkout in the sandbox processor, and refunds of them. */
  charges: number;
  refunds: number;
  redemptions: number;
}

async function count(srv: TestServer, sql: string, params: unknown[]): Promise<number> {
  const rows = await srv.deps.orm.em.fork().execute<{ n: string }[]>(sql, params);
  return Number(rows[0]!.n);
}

export async function outcomeOf(srv: TestServer, checkoutId: string, benefitId: string): Promise<Outcome> {
  const em = srv.deps.orm.em.fork();
  const [c] = await em.execute<{ status: string; customer_id: string | null }[]>(
    'select status, customer_id from checkouts where id = ?',
    [checkoutId],
  );
  const customer = c!.customer_id;
  const orders = await em.execute<{ status: string }[]>('select status from orders where checkout_id = ?', [checkoutId]);
  const chargeKey = `checkout:${checkoutId}:charge%`;
  return {
    checkoutStatus: c!.status,
    orders: orders.length,
    orderStatuses: orders.map((o) => o.status),
    subscriptions: await count(srv, 'select count(*) as n from subscriptions where checkout_id = ?', [checkoutId]),
    grants: customer ? await count(srv, 'select count(*) as n from benefit_grants where customer_id = ? and benefit_id = ?', [customer, benefitId]) : 0,
    grantsGranted: customer
      ? await count(srv, 'select count(*) as n from benefit_grants where customer_id = ? and benefit_id = ? and granted_at is not null', [customer, benefitId])
      : 0,
    licenseKeys: customer ? await count(srv, 'select count(*) as n from license_keys where customer_id = ?', [customer]) : 0,
    charges: await count(srv, "select count(*) as n from sandbox_charges where idempotency_key like ? and status = 'succeeded'", [chargeKey]),
    refunds: await count(
      srv,
      'select count(*) as n from sandbox_refunds r join sandbox_charges ch on ch.id = r.charge_id where ch.idempotency_key like ?',
      [chargeKey],
    ),
    redemptions: await count(srv, 'select count(*) as n from discount_redemptions where checkout_id = ?', [checkoutId]),
  };
}

/** Polls until the checkout reaches one of `statuses` (the workflow runs after confirm answered). */
export async function checkoutReaches(srv: TestServer, checkoutId: string, statuses: string[], timeoutMs = 90_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [c] = await srv.deps.orm.em.fork().execute<{ status: string }[]>('select status from checkouts where id = ?', [checkoutId]);
    if (c && statuses.includes(c.status)) return c.status;
    if (Date.now() > deadline) throw new Error(`checkout ${checkoutId} is ${c?.status}, not ${statuses.join('|')}, after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * The outcome once `settled` holds (benefit grants run in their own workflows after the checkout
 * succeeded), or the last one seen after `timeoutMs`, for the caller's assertions to report.
 */
export async function settledOutcome(
  srv: TestServer,
  checkoutId: string,
  benefitId: string,
  settled: (o: Outcome) => boolean = (o) => o.grantsGranted > 0,
  timeoutMs = 60_000,
): Promise<Outcome> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const o = await outcomeOf(srv, checkoutId, benefitId);
    if (settled(o) || Date.now() > deadline) return o;
    await new Promise((r) => setTimeout(r, 250));
  }
}
