/**
 * What makes a run findable and readable in Temporal: the custom search attributes every
 * workflow the platform starts carries (its organization, its customer when it has one, the business
 * key of the run, and a subscription's current status), and the static summary / details the Temporal
 * UI shows in its lists and on the run's page.
 *
 * Pure (no Node built-ins, no workflow APIs), so the API, the worker and workflow code share it. The
 * API builds a `RunMetadata` for each start (api/src/kit/run-metadata.ts); workflow code turns one
 * into child start options. Search attributes must be registered on the namespace before a run may
 * carry them (the dev server registers them at start, `ensureSearchAttributes` elsewhere; see
 * docs/operations.md): a start sets them only when they are registered, and workflow code upserts
 * only in runs that carry them.
 */
import type { SearchAttributePair } from '@temporalio/common';

type KeywordKey = Extract<SearchAttributePair, { value: string }>['key'];
/** `defineSearchAttributeKey(name, 'KEYWORD')` without a runtime import of @temporalio/common. */
const keyword = (name: string) => ({ name, type: 'KEYWORD' }) as KeywordKey & { type: 'KEYWORD' };

/** Every custom search attribute of the platform, all Keyword (exact match, `=` / `IN` in visibility queries). */
export const SEARCH_ATTRIBUTES = {
  organizationId: keyword('OrganizationId'),
  customerId: keyword('CustomerId'),
  checkoutId: keyword('CheckoutId'),
  orderId: keyword('OrderId'),
  subscriptionId: keyword('SubscriptionId'),
  refundId: keyword('RefundId'),
  benefitId: keyword('BenefitId'),
  webhookEndpointId: keyword('WebhookEndpointId'),
  /** The subscription workflow keeps it equal to the subscription's status (active, past_due, unpaid, canceled). */
  subscriptionStatus: keyword('SubscriptionStatus'),
} as const;

export type RunKey = keyof typeof SEARCH_ATTRIBUTES;
/** The search attribute values of one run (camelCase keys of SEARCH_ATTRIBUTES). */
export type RunIds = Partial<Record<RunKey, string | null>>;

/** What one start carries besides its arguments; persisted with recorded starts (workflow_starts.metadata). */
export interface RunMetadata {
  /** One line for the Temporal UI's list (Temporal markdown); never empty. */
  summary: string;
  /** Longer text for the run's page (Temporal markdown). */
  details?: string | null;
  ids: RunIds;
}

/** Summaries stay one short line: the UI truncates long ones and they are stored with every start. */
const MAX_SUMMARY = 200;

export function oneLine(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > MAX_SUMMARY ? `${t.slice(0, MAX_SUMMARY - 1)}…` : t;
}

/** `USD 19.00` from minor units (two decimals, as every currency the platform sells in). */
export function money(amount: number | null | undefined, currency: string | null | undefined): string {
  if (amount == null) return 'free';
  return `${(currency ?? 'usd').toUpperCase()} ${(amount / 100).toFixed(2)}`;
}

/** The search attribute pairs of `ids` (unset and empty values left out). */
export function searchAttributePairs(ids: RunIds): SearchAttributePair[] {
  const pairs: SearchAttributePair[] = [];
  for (const [k, key] of Object.entries(SEARCH_ATTRIBUTES) as [RunKey, (typeof SEARCH_ATTRIBUTES)[RunKey]][]) {
    const v = ids[k];
    if (v) pairs.push({ key, value: v });
  }
  return pairs;
}

/** Start options of a run: its summary and details always, its search attributes when the namespace has them. */
export function runStartOptions(
  meta: RunMetadata | null | undefined,
  withSearchAttributes: boolean,
): { staticSummary?: string; staticDetails?: string; typedSearchAttributes?: SearchAttributePair[] } {
  if (!meta) return {};
  const pairs = withSearchAttributes ? searchAttributePairs(meta.ids) : [];
  return {
    staticSummary: oneLine(meta.summary),
    ...(meta.details ? { staticDetails: meta.details } : {}),
    ...(pairs.length ? { typedSearchAttributes: pairs } : {}),
  };
}

/** Markdown details listing the run's ids (what the summary leaves out), one per line. */
export function idDetails(ids: RunIds, lines: string[] = []): string {
  const idLines = (Object.keys(SEARCH_ATTRIBUTES) as RunKey[])
    .filter((k) => ids[k])
    .map((k) => `- ${SEARCH_ATTRIBUTES[k].name}: \`${ids[k]}\``);
  return [...lines, ...(lines.length && idLines.length ? [''] : []), ...idLines].join('\n');
}
