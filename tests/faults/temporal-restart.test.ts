/**
 * The Temporal server restarted (killed, as a crash would, and started again on its state file) while
 * buyers purchase: the writes still commit and answer (the confirmation is recorded with its workflow
 * start in `workflow_starts`), the starts that could not reach Temporal are caught up by the worker's
 * sweeper once it is back, and every purchase ends with its one paid order, the ones caught mid-run
 * included. The test runs its own Temporal dev server (processes.ts), never the shared one.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { createProduct } from '../catalogue/helpers-c.ts';
import { buyer, call, confirmRaw, confirmSeller, newCheckout, until, type Seller } from '../confirm/helpers.ts';
import { WorkflowStart } from '../../api/src/kit/workflow-starts.ts';
import { startOwnTemporal, type OwnTemporal } from './processes.ts';

const NAMESPACE = 'faults';
let temporal: OwnTemporal;
let srv: TestServer;
let s: Seller;

beforeAll(async () => {
  temporal = await startOwnTemporal(NAMESPACE);
  srv = await startTestServer({ env: { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: NAMESPACE } });
  s = await confirmSeller(srv);
}, 240_000);

afterAll(async () => {
  await srv?.close().catch(() => {});
  await temporal?.close();
}, 60_000);

const email = () => `temporal-${randomUUID().slice(0, 8)}@example.com`;

async function purchase(productId: string) {
  const c = await newCheckout(srv, s, productId);
  const r = await confirmRaw(srv, c.client_secret, { ...buyer(email()), confirmation_token_id: 'tok_visa' });
  return { checkoutId: c.id, status: r.status, body: r.body };
}

async function paidOrders(checkoutId: string) {
  return until(async () => {
    const r = await call(srv.url, s.token, 'GET', `/v1/orders/?checkout_id=${checkoutId}`);
    return r.status === 200 && r.body.items.length > 0 && r.body.items;
  }, 120_000);
}

describe('Temporal server restarted during purchases', () => {
  it('commits the writes meanwhile, catches their workflow starts up afterwards, and leaves no purchase without its order', { timeout: 240_000 }, async () => {
    const product = await createProduct(srv.url, s.token, { name: 'Temporal-proof' });

    // A purchase whose workflow is under way when the server dies, and purchases while it is down.
    const inFlight = await purchase(product.id);
    expect(inFlight.status).toBe(200);
    await temporal.kill();
    const during = [await purchase(product.id), await purchase(product.id)];
    expect(during.map((p) => p.status)).toEqual([200, 200]);
    // Not started: their recorded starts are still pending while Temporal is away.
    const em = srv.deps.orm.em.fork();
    const pending = await em.find(WorkflowStart, { startedAt: null, taskQueue: srv.deps.cfg.TEMPORAL_TASK_QUEUE });
    expect(pending.map((w) => w.workflowId).filter((id) => during.some((p) => id.endsWith(p.checkoutId))).sort()).toEqual(
      during.map((p) => `checkout-confirm:${p.checkoutId}`).sort(),
    );
    // A seller's write commits too.
    const other = await call(srv.url, s.token, 'POST', '/v1/products/', {
      name: 'Made while Temporal was down',
      prices: [{ amount_type: 'fixed', price_amount: 500, price_currency: 'usd' }],
    });
    expect(other.status).toBe(201);

    await temporal.start();

    // Every purchase ends with exactly one paid order; the sweeper started what the API could not.
    for (const p of [inFlight, ...during]) {
      const orders = await paidOrders(p.checkoutId);
      expect(orders.map((o: { status: string }) => o.status)).toEqual(['paid']);
    }
    await until(async () => (await em.fork().count(WorkflowStart, { startedAt: null, taskQueue: srv.deps.cfg.TEMPORAL_TASK_QUEUE })) === 0, 60_000);
    const checkout = await call(srv.url, s.token, 'GET', `/v1/checkouts/${during[1]!.checkoutId}`);
    expect(checkout.status).toBe(200);
    expect(checkout.body.status).toBe('succeeded');

    // The worker and the API carry on without a restart.
    const after = await purchase(product.id);
    expect(after.status).toBe(200);
    expect((await paidOrders(after.checkoutId)).map((o: { status: string }) => o.status)).toEqual(['paid']);
  });
});
