/**
 * Search attributes and user metadata of the workflow runs the platform starts: the one
 * place that says what each run carries (`*Run` builders below) and how a start gets it
 * (`startWithMetadata`). Keys and helpers shared with workflow code are in workflows/src/metadata.ts.
 *
 * Custom search attributes exist only once registered on the namespace. The dev server is started
 * with them (infra/src/services.ts); against any other cluster `ensureSearchAttributes` registers the
 * missing ones when the stack or a worker starts. A start sets them only when the namespace lists
 * them (checked once per client, again after a while when absent), so a server without them (the
 * time-skipping test server, a cluster nobody registered them on) still runs everything, with
 * summaries only.
 */
import type { Client, Connection } from '@temporalio/client';
import { isGrpcServiceError } from '@temporalio/client';
import { SEARCH_ATTRIBUTES, idDetails, money, runStartOptions, type RunIds, type RunMetadata } from '@emporia/workflows/metadata';

export type { RunMetadata } from '@emporia/workflows/metadata';

/** temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD */
const KEYWORD = 2;
/** gRPC status codes (@grpc/grpc-js `status`). */
const INVALID_ARGUMENT = 3;
const ALREADY_EXISTS = 6;
export const SEARCH_ATTRIBUTE_NAMES = Object.values(SEARCH_ATTRIBUTES).map((k) => k.name);

/** `temporal server start-dev` flags that register every search attribute at start. */
export function devServerSearchAttributeFlags(): string[] {
  return SEARCH_ATTRIBUTE_NAMES.flatMap((name) => ['--search-attribute', `${name}=Keyword`]);
}

/** The platform's search attributes the namespace lacks (all of them when the server cannot say). */
async function missingSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const res = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set([...Object.keys(res.customAttributes ?? {}), ...Object.keys(res.systemAttributes ?? {})]);
  return SEARCH_ATTRIBUTE_NAMES.filter((n) => !known.has(n));
}

/**
 * Registers the platform's search attributes that `namespace` lacks (what `temporal operator
 * search-attribute create --name X --type Keyword` does), then waits until the namespace lists them.
 * Idempotent: with every one present it only reads. Answers the names it registered.
 */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
  opts: { timeoutMs?: number } = {},
): Promise<string[]> {
  const missing = await missingSearchAttributes(connection, namespace);
  if (!missing.length) return [];
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((n) => [n, KEYWORD])),
    });
  } catch (err) {
    // Another process registered them meanwhile.
    if (!(isGrpcServiceError(err) && err.code === ALREADY_EXISTS)) throw err;
  }
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  while ((await missingSearchAttributes(connection, namespace)).length) {
    if (Date.now() > deadline) throw new Error(`search attributes ${missing.join(', ')} not listed after registering them`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return missing;
}

/** How long a client that found the search attributes missing waits before asking again. */
const RECHECK_MS = 30_000;
const availability = new WeakMap<Client, { ok: boolean; at: number; pending?: Promise<boolean> }>();

/** Whether the client's namespace has every platform search attribute (cached per client). */
export async function searchAttributesAvailable(client: Client): Promise<boolean> {
  const known = availability.get(client);
  if (known?.pending) return known.pending;
  if (known && (known.ok || Date.now() - known.at < RECHECK_MS)) return known.ok;
  const pending = missingSearchAttributes(client.connection as Connection, client.options.namespace)
    .then((m) => m.length === 0)
    .catch(() => false) // ignore: unreachable counts as unavailable, asked again after RECHECK_MS
    .then((ok) => {
      availability.set(client, { ok, at: Date.now() });
      return ok;
    });
  availability.set(client, { ok: known?.ok ?? false, at: known?.at ?? 0, pending });
  return pending;
}

function searchAttributeRejected(err: unknown): boolean {
  const e = err as { code?: number; message?: string; cause?: { code?: number; message?: string } } | null;
  const grpc = isGrpcServiceError(e) ? e : isGrpcServiceError(e?.cause) ? e.cause : null;
  return grpc?.code === INVALID_ARGUMENT && /search attribute/i.test(grpc.message ?? '');
}

/**
 * Runs a start with the run's metadata: `start` gets the summary, details and (when registered) the
 * search attributes to spread into its options. Should the server refuse the search attributes (they
 * were removed since the check), the start is made again without them; a run is never lost for them.
 */
export async function startWithMetadata<T>(
  client: Client,
  meta: RunMetadata | null | undefined,
  start: (options: ReturnType<typeof runStartOptions>) => Promise<T>,
): Promise<T> {
  const withAttributes = meta ? await searchAttributesAvailable(client) : false;
  try {
    return await start(runStartOptions(meta, withAttributes));
  } catch (err) {
    if (!withAttributes || !searchAttributeRejected(err)) throw err;
    availability.set(client, { ok: false, at: Date.now() });
    return start(runStartOptions(meta, false));
  }
}

// ---------------------------------------------------------------------------------------------------
// What each workflow's runs carry. Plain inputs (not entities) so activities and routes that hold only
// some columns can build them; every summary names the thing, the money and the person when known.

const interval = (i: string | null | undefined) => (i ? `/${i}` : '');
const who = (email: string | null | undefined) => (email ? ` for ${email}` : '');
const meta = (summary: string, ids: RunIds, lines: string[] = []): RunMetadata => ({ summary, details: idDetails(ids, lines), ids });

export function checkoutConfirmRun(c: {
  checkoutId: string;
  organizationId: string;
  customerId: string | null;
  customerEmail: string | null;
  productName: string;
  amount: number | null;
  currency: string | null;
  recurringInterval: string | null;
}): RunMetadata {
  return meta(
    `Fulfil checkout: ${c.productName} (${money(c.amount, c.currency)}${interval(c.recurringInterval)})${who(c.customerEmail)}`,
    { organizationId: c.organizationId, customerId: c.customerId, checkoutId: c.checkoutId },
    ['Creates the order (and subscription), grants the benefits, marks the checkout succeeded and mails the receipt. Steps are idempotent.'],
  );
}

export function subscriptionRun(s: {
  subscriptionId: string;
  organizationId: string;
  customerId: string;
  customerEmail: string | null;
  productName: string;
  amount: number;
  currency: string;
  recurringInterval: string;
  status: string;
}): RunMetadata {
  return meta(
    `Renew ${s.productName} (${money(s.amount, s.currency)}/${s.recurringInterval})${who(s.customerEmail)}`,
    { organizationId: s.organizationId, customerId: s.customerId, subscriptionId: s.subscriptionId, subscriptionStatus: s.status },
    ['Renews at each period end, dunning on a declined renewal; applies cancel / uncancel / revoke / product changes. SubscriptionStatus follows the subscription.'],
  );
}

export function refundRun(r: {
  refundId: string;
  organizationId: string;
  orderId: string;
  customerId: string | null;
  customerEmail: string | null;
  amount: number;
  currency: string;
  revokeBenefits: boolean;
}): RunMetadata {
  return meta(
    `Refund ${money(r.amount, r.currency)} of an order${who(r.customerEmail)}${r.revokeBenefits ? ' and revoke its benefits' : ''}`,
    { organizationId: r.organizationId, customerId: r.customerId, orderId: r.orderId, refundId: r.refundId },
    ['Refunds at the payment processor (idempotency key from the refund id), then settles the order.'],
  );
}

export function productCreatedRun(p: { productId: string; organizationId: string; productName: string }): RunMetadata {
  return meta(`Announce new product ${p.productName} to the organization's members`, { organizationId: p.organizationId }, [`- ProductId: \`${p.productId}\``]);
}

export function productBenefitsRun(p: { productId: string; organizationId: string; productName: string; added: number; removed: number }): RunMetadata {
  const parts = [p.added ? `grant ${p.added} added` : '', p.removed ? `revoke ${p.removed} removed` : ''].filter(Boolean).join(', ');
  return meta(`Apply benefit changes of ${p.productName} to its customers (${parts || 'no change'})`, { organizationId: p.organizationId }, [`- ProductId: \`${p.productId}\``]);
}

export function benefitGrantRun(g: {
  benefitId: string;
  customerId: string;
  organizationId: string;
  benefitType: string;
  benefitDescription: string;
  customerEmail: string | null;
}): RunMetadata {
  return meta(
    `Grant / revoke ${g.benefitType} benefit "${g.benefitDescription}"${who(g.customerEmail)}`,
    { organizationId: g.organizationId, customerId: g.customerId, benefitId: g.benefitId },
    ['Applies grant / revoke / update requests of this benefit for this customer in order (benefitAction signals).'],
  );
}

export function benefitRequestsRun(
  input: { kind: 'customer-deleted'; customerId: string } | { kind: 'benefit-changed'; benefitId: string; action: string } | { kind: 'grant-requests'; benefitId: string; customerId: string; requests: unknown[] },
  organizationId: string | null,
): RunMetadata {
  switch (input.kind) {
    case 'customer-deleted':
      return meta('Revoke every benefit of a deleted customer', { organizationId, customerId: input.customerId });
    case 'benefit-changed':
      return meta(`${input.action === 'revoke' ? 'Revoke a deleted benefit from' : 'Re-apply a changed benefit to'} its holders`, { organizationId, benefitId: input.benefitId });
    case 'grant-requests':
      return meta(`Queue ${input.requests.length} benefit request(s) for one customer`, { organizationId, customerId: input.customerId, benefitId: input.benefitId });
  }
}

/** A receiver's URL without its query and fragment (they may carry a token). */
function withoutQuery(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return 'the endpoint';
  }
}

export function webhookRetriesRun(w: {
  webhookEventId: string;
  endpointId: string;
  organizationId: string | null;
  url: string | null;
  eventType: string | null;
  firstAttempt: number;
}): RunMetadata {
  return meta(
    `Deliver webhook ${w.eventType ?? 'event'}${w.url ? ` to ${withoutQuery(w.url)}` : ''} (attempts from #${w.firstAttempt})`,
    { organizationId: w.organizationId, webhookEndpointId: w.endpointId },
    [`- Webhook event (webhook-id): \`${w.webhookEventId}\``],
  );
}

export function outboxDispatcherRun(taskQueue: string): RunMetadata {
  return meta(`Webhook dispatcher of task queue ${taskQueue}: fans outbox events out to endpoints, first attempts`, {});
}

export function checkoutExpirySweeperRun(taskQueue: string): RunMetadata {
  return meta(`Checkout expiry sweeper of task queue ${taskQueue}: expires open checkouts past expires_at`, {});
}
