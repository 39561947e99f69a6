/**
 * Issue #21: every workflow run the platform starts is findable in Temporal by its organization, its
 * customer and its business key (custom search attributes, registered on the dev server by the test
 * global setup), shows a one-line summary, and the subscription workflow keeps SubscriptionStatus
 * current. Asserted through Temporal's visibility API (what the Temporal UI and CLI query), which is
 * eventually consistent: every read polls.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { subscriptionWorkflowId } from '../../workflows/src/ids.ts';
import { SEARCH_ATTRIBUTES, type RunKey } from '../../workflows/src/metadata.ts';
import { sellerWithSdk } from '../catalogue/helpers-c.ts';
import { seller } from '../harness.ts';
import { declineRenewalNow } from './declined-renewal.ts';
import { inTransaction } from '../../api/src/kit/db.ts';
import { benefitRequestsRun } from '../../api/src/kit/run-metadata.ts';
import { startPendingWorkflows, startWorkflow, WorkflowStart } from '../../api/src/kit/workflow-starts.ts';
import { benefitRequestsWorkflowId } from '../../workflows/src/ids.ts';
import { GRANT_SCOPES, buy, call, createBenefit, productWith, startGrantEnv, until, type GrantEnv, type Purchase, type Seller } from '../grants/helpers.ts';

const SLOW = 240_000;
const SCOPES = [...GRANT_SCOPES, 'refunds:read', 'refunds:write', 'webhooks:read', 'webhooks:write'];

let env: GrantEnv;
let s: Seller;
let purchase: Purchase;

beforeAll(async () => {
  env = await startGrantEnv();
  s = await sellerWithSdk(env.srv, SCOPES);
}, SLOW);
afterAll(async () => {
  // Runs left waiting (a subscription in dunning, webhook retries) end with the test file.
  for await (const run of env.srv.deps.temporal.workflow.list({ query: `TaskQueue = "${env.srv.deps.cfg.TEMPORAL_TASK_QUEUE}" AND ExecutionStatus = "Running"` })) {
    await env.srv.deps.temporal.workflow.getHandle(run.workflowId, run.runId).terminate('test finished').catch(() => {});
  }
  await env?.close();
}, SLOW);

async function list(query: string): Promise<WorkflowExecutionInfo[]> {
  const runs: WorkflowExecutionInfo[] = [];
  for await (const run of env.srv.deps.temporal.workflow.list({ query })) runs.push(run);
  return runs;
}

/** Polls the visibility query until `ok` holds for its answer (visibility lags the runs by moments). */
function listUntil(query: string, ok: (runs: WorkflowExecutionInfo[]) => boolean): Promise<WorkflowExecutionInfo[]> {
  return until(async () => {
    const runs = await list(query);
    return ok(runs) ? runs : null;
  });
}

const attr = (run: WorkflowExecutionInfo, k: RunKey) => run.typedSearchAttributes.get(SEARCH_ATTRIBUTES[k]);
const types = (runs: WorkflowExecutionInfo[]) => new Set(runs.map((r) => r.type));

describe('finding runs by customer and organization', { timeout: SLOW }, () => {
  it('answers CustomerId with the checkout-confirm, subscription and benefit-grant runs of a purchase', async () => {
    env.github.addRepository('acme', 'observability');
    const benefitId = await createBenefit(env.srv, s, {
      type: 'github_repository',
      description: 'Source access',
      properties: { repository_owner: 'acme', repository_name: 'observability', permission: 'pull' },
    });
    const productId = await productWith(env.srv, s, [benefitId], true);
    purchase = await buy(env.srv, s, productId);
    expect(purchase.subscriptionId).not.toBeNull();

    const runs = await listUntil(`CustomerId = "${purchase.customerId}"`, (r) =>
      ['checkoutConfirmWorkflow', 'subscriptionWorkflow', 'benefitGrantWorkflow'].every((t) => types(r).has(t)),
    );
    const byType = (t: string) => runs.find((r) => r.type === t)!;
    expect(byType('checkoutConfirmWorkflow').workflowId).toBe(`checkout-confirm:${purchase.checkoutId}`);
    expect(attr(byType('checkoutConfirmWorkflow'), 'checkoutId')).toBe(purchase.checkoutId);
    expect(byType('subscriptionWorkflow').workflowId).toBe(subscriptionWorkflowId(purchase.subscriptionId!));
    expect(attr(byType('subscriptionWorkflow'), 'subscriptionId')).toBe(purchase.subscriptionId);
    expect(attr(byType('benefitGrantWorkflow'), 'benefitId')).toBe(benefitId);
    for (const r of runs) expect(attr(r, 'organizationId')).toBe(s.organization.id);

    // The same runs for the business key alone, and scoped to the organization.
    const bySubscription = await listUntil(`SubscriptionId = "${purchase.subscriptionId}"`, (r) => r.length > 0);
    expect(bySubscription.map((r) => r.type)).toContain('subscriptionWorkflow');
    const active = await listUntil(`OrganizationId = "${s.organization.id}" AND SubscriptionStatus = "active"`, (r) => r.length > 0);
    expect(active.map((r) => r.workflowId)).toContain(subscriptionWorkflowId(purchase.subscriptionId!));

    // Readable in the UI: the subscription run names the product, its price and the buyer.
    const summary = await env.srv.deps.temporal.workflow.getHandle(subscriptionWorkflowId(purchase.subscriptionId!)).describe().then((d) => d.staticSummary());
    const email = (await env.srv.deps.orm.em.fork().findOneOrFail(Customer, { id: purchase.customerId })).email;
    expect(summary).toMatch(/^Renew Product \w+ \(USD 10\.00\/month\) for /);
    expect(summary).toContain(email);
  });

  it('finds a subscription whose renewal was declined with OrganizationId and SubscriptionStatus = "past_due"', async () => {
    const productId = await productWith(env.srv, s, [], true);
    const p = await buy(env.srv, s, productId);
    const subscriptionId = p.subscriptionId!;
    await listUntil(`SubscriptionId = "${subscriptionId}" AND SubscriptionStatus = "active"`, (r) => r.length > 0);

    // The buyer's card now declines off-session and the period ends now: the renewal is declined.
    await declineRenewalNow(env.srv, p.customerId, subscriptionId);
    const em = env.srv.deps.orm.em.fork();

    const pastDue = await listUntil(`OrganizationId = "${s.organization.id}" AND SubscriptionStatus = "past_due"`, (r) =>
      r.some((x) => x.workflowId === subscriptionWorkflowId(subscriptionId)),
    );
    expect(pastDue.map((r) => r.workflowId)).not.toContain(subscriptionWorkflowId(purchase.subscriptionId!));
    expect((await em.fork().findOneOrFail(Subscription, { id: subscriptionId })).status).toBe('past_due');
    // The run's page says what it waits for (Temporal's "current details").
    const metadata = await until(async () => {
      const m = await env.srv.deps.temporal.workflow.getHandle(subscriptionWorkflowId(subscriptionId)).query<{ currentDetails?: string }>('__temporal_workflow_metadata');
      return m.currentDetails?.includes('past due') ? m : null;
    });
    expect(metadata.currentDetails).toMatch(/dunning retry #1 of 4 at \d{4}-/);
  });
});

/** The search attributes each workflow type's runs carry (platform-level runs: none, a summary only). */
const EXPECTED: Record<string, RunKey[]> = {
  productCreatedWorkflow: ['organizationId'],
  productBenefitsWorkflow: ['organizationId'],
  checkoutConfirmWorkflow: ['organizationId', 'customerId', 'checkoutId'],
  subscriptionWorkflow: ['organizationId', 'customerId', 'subscriptionId', 'subscriptionStatus'],
  benefitGrantWorkflow: ['organizationId', 'customerId', 'benefitId'],
  benefitRequestsWorkflow: ['organizationId', 'benefitId'],
  refundWorkflow: ['organizationId', 'customerId', 'orderId', 'refundId'],
  webhookDeliveryWorkflow: ['organizationId', 'webhookEndpointId'],
  outboxDispatcherWorkflow: [],
  checkoutExpirySweeperWorkflow: [],
};

describe('every workflow type the platform starts', { timeout: SLOW }, () => {
  it('carries a summary and its search attributes', async () => {
    // Runs of the types the purchase tests above did not start: a refund, a deleted benefit's
    // revocations, a webhook retry (the receiver refuses connections).
    const endpoint = await call(env.srv.url, s.token, 'POST', '/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/hook', events: ['product.created'] });
    expect(endpoint.status).toBe(201);
    await productWith(env.srv, s, []);
    const refund = await call(env.srv.url, s.token, 'POST', '/v1/refunds/', { order_id: purchase.orderId, reason: 'customer_request', amount: 100 });
    expect(refund.status).toBe(201);
    const doomed = await createBenefit(env.srv, s, { type: 'custom', description: 'Going away', properties: { note: 'bye' } });
    expect((await call(env.srv.url, s.token, 'DELETE', `/v1/benefits/${doomed}`)).status).toBe(204);

    const taskQueue = env.srv.deps.cfg.TEMPORAL_TASK_QUEUE;
    const runs = await listUntil(`TaskQueue = "${taskQueue}"`, (r) => Object.keys(EXPECTED).every((t) => types(r).has(t)));
    const checked: string[] = [];
    for (const [type, keys] of Object.entries(EXPECTED)) {
      // The first run of each type (a continued-as-new run carries the attributes over, not the summary).
      const run = runs.filter((r) => r.type === type).sort((a, b) => a.startTime.getTime() - b.startTime.getTime())[0]!;
      const summary = await env.srv.deps.temporal.workflow.getHandle(run.workflowId, run.runId).describe().then((d) => d.staticSummary());
      expect(summary, type).toBeTruthy();
      for (const k of keys) expect(attr(run, k), `${type} ${SEARCH_ATTRIBUTES[k].name}`).toBeTruthy();
      if (keys.includes('organizationId')) expect(attr(run, 'organizationId'), type).toBe(s.organization.id);
      checked.push(type);
    }
    expect(checked).toHaveLength(Object.keys(EXPECTED).length);
  });
});

describe('a recorded start the sweeper makes', { timeout: SLOW }, () => {
  it('carries the summary and search attributes recorded with it', async () => {
    const taskQueue = env.srv.deps.cfg.TEMPORAL_TASK_QUEUE;
    const benefitId = randomUUID();
    const workflowId = benefitRequestsWorkflowId(randomUUID());
    const input = { kind: 'benefit-changed' as const, benefitId, action: 'revoke' as const };
    // Recorded in a transaction whose after-commit start is dropped (the API died after the commit).
    const { afterCommit } = await inTransaction(env.srv.deps.orm.em.fork(), async (tx) => {
      startWorkflow(tx, () => {}, env.srv.deps, {
        workflowType: 'benefitRequestsWorkflow',
        taskQueue,
        workflowId,
        args: [input],
        metadata: benefitRequestsRun(input, s.organization.id),
      });
      await tx.flush();
    });
    await afterCommit();
    const row = await env.srv.deps.orm.em.fork().findOneOrFail(WorkflowStart, { workflowId });
    expect(row.metadata?.ids).toMatchObject({ organizationId: s.organization.id, benefitId });

    await until(async () => (await env.srv.deps.orm.em.fork().findOneOrFail(WorkflowStart, { workflowId })).startedAt
      ? true
      : (await startPendingWorkflows(env.srv.deps.orm.em.fork(), env.srv.deps.temporal, taskQueue, { graceMs: 0 }), false));
    const [run] = await listUntil(`WorkflowId = "${workflowId}"`, (r) => r.length === 1);
    expect(attr(run!, 'organizationId')).toBe(s.organization.id);
    expect(attr(run!, 'benefitId')).toBe(benefitId);
    const summary = await env.srv.deps.temporal.workflow.getHandle(workflowId).describe().then((d) => d.staticSummary());
    expect(summary).toBe('Revoke a deleted benefit from its holders');
  });
});

describe('linking the console to Temporal', () => {
  it('tells a signed-in user where the Temporal UI is and how to link a run or a query; not an access token', async () => {
    const user = await seller(env.srv.url);
    const res = await fetch(`${env.srv.url}/v1/operations/temporal`, { headers: { cookie: user.cookie } });
    expect(res.status).toBe(200);
    const body = await res.json();
    const ui = env.srv.deps.cfg.TEMPORAL_UI_URL.replace(/\/+$/, '');
    const org = user.organization.id;
    expect(body).toEqual({
      organization_id: org,
      ui_url: ui,
      namespace: env.srv.deps.cfg.TEMPORAL_NAMESPACE,
      workflow_url_template: `${ui}/namespaces/${env.srv.deps.cfg.TEMPORAL_NAMESPACE}/workflows/{workflow_id}`,
      query_url_template: `${ui}/namespaces/${env.srv.deps.cfg.TEMPORAL_NAMESPACE}/workflows?query=${encodeURIComponent(`OrganizationId = "${org}" AND (`)}{query}${encodeURIComponent(')')}`,
      search_attributes: Object.values(SEARCH_ATTRIBUTES).map((k) => k.name),
    });
    // Scoping (another organization, tokens, no credentials): tests/security/operations-scope.test.ts.
    expect((await call(env.srv.url, null, 'GET', '/v1/operations/temporal')).status).toBe(401);
  });
});
