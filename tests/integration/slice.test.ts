/**
 * The thin slice through every real component: HTTP → PostgreSQL → (after commit) a Temporal
 * workflow → an activity that mails through SMTP and writes a row back. Also through the official
 * Polar SDK, which must parse our product shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Polar } from '@polar-sh/sdk';
import { loadConfig } from '../../api/src/config.ts';
import { Notification } from '../../api/src/modules/notifications/entities.ts';
import { OutboxEvent } from '../../api/src/modules/webhooks/entities.ts';
import { productCreatedWorkflowId } from '../../workflows/src/ids.ts';
import { json, seller, startTestServer, waitForMail, type TestServer } from '../harness.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv?.close();
});

describe('product creation slice', () => {
  it('creates a product over HTTP, runs its workflow, mails the members and records the mail', async () => {
    const s = await seller(srv.url);
    const res = await fetch(`${srv.url}/v1/products/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${s.token}` },
      body: JSON.stringify({
        name: 'Pro plan',
        recurring_interval: 'month',
        prices: [{ amount_type: 'fixed', price_amount: 1900, price_currency: 'EUR' }],
      }),
    });
    expect(res.status).toBe(201);
    const product = await json(res);
    expect(product).toMatchObject({
      name: 'Pro plan',
      organization_id: s.organization.id,
      is_recurring: true,
      prices: [{ amount_type: 'fixed', price_amount: 1900, price_currency: 'eur', type: 'recurring' }],
    });

    // The workflow, with its deterministic id, completes on the worker.
    const handle = srv.deps.temporal.workflow.getHandle(productCreatedWorkflowId(product.id));
    await expect(handle.result()).resolves.toEqual({ sent: 1 });

    // It is visible in the Temporal Web UI (through the UI server's own API).
    const ui = loadConfig().TEMPORAL_UI_URL.replace('localhost', '127.0.0.1');
    const described = await json(
      await fetch(`${ui}/api/v1/namespaces/${srv.deps.cfg.TEMPORAL_NAMESPACE}/workflows/${encodeURIComponent(productCreatedWorkflowId(product.id))}`),
    );
    expect(described.workflowExecutionInfo).toMatchObject({
      type: { name: 'productCreatedWorkflow' },
      status: 'WORKFLOW_EXECUTION_STATUS_COMPLETED',
    });

    const mails = await waitForMail(s.email);
    expect(mails.map((m) => m.subject)).toContain('New product in Test Organization: Pro plan');
    expect(mails.find((m) => m.subject.includes('Pro plan'))!.text).toContain('EUR 19.00 per month');

    // The change and its webhook event were committed together.
    const events = await srv.deps.orm.em.fork().find(OutboxEvent, { organizationId: s.organization.id });
    expect(events.map((e) => [e.type, e.data.id])).toEqual([['product.created', product.id]]);

    const rows = await srv.deps.orm.em.fork().find(Notification, { organizationId: s.organization.id });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ recipient: s.email, kind: 'product.created' });
  });

  it('is readable through the official Polar SDK', async () => {
    const s = await seller(srv.url);
    const polar = new Polar({ accessToken: s.token, serverURL: srv.url });
    const created = await polar.products.create({
      name: 'Ebook',
      recurringInterval: null,
      prices: [{ amountType: 'fixed', priceAmount: 999, priceCurrency: 'usd' }],
    });
    expect(created.isRecurring).toBe(false);
    expect(created.prices[0]).toMatchObject({ amountType: 'fixed', priceAmount: 999 });
    const fetched = await polar.products.get({ id: created.id });
    expect(fetched.name).toBe('Ebook');
    const pages = await polar.products.list({ organizationId: s.organization.id });
    expect(pages.result.items.map((p) => p.id)).toEqual([created.id]);
    expect(pages.result.pagination).toEqual({ totalCount: 1, maxPage: 1 });
  });
});
