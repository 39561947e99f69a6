/**
 * Usage of a subscription's metered prices (docs/billing.md): for each live `metered_unit` price of
 * the product, the meter's aggregation over the customer's events not billed yet, the customer's
 * meter credit balance, and the line (pricing/metered.ts). Renewals record what they billed
 * (`MeteredBilling`); the upcoming-invoice preview computes the same without recording.
 *
 * The query is composed from the meters and events modules' exported pieces (`meterCondition`,
 * `compileAggregation`, `runSql`): the meters module's `meterQuantities` buckets by event timestamp
 * only, while billing also bounds the ingestion time (the watermark that bills late events in the next
 * cycle, once). A renewal asks for all its meters in one statement (`meterFigures`).
 */
import { wrap } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import { METER_CREDITED_EVENT } from '../benefits/types/meter-credit.ts';
import { runSql, SqlParams } from '../events/sql.ts';
import { compileAggregation } from '../meters/filter.ts';
import { meterCondition } from '../meters/service.ts';
import type { Meter } from '../meters/entities.ts';
import { formatDecimal, meteredLine, parseDecimal, subtractDecimal, type MeteredLine } from '../pricing/metered.ts';
import type { ProductPrice } from '../products/entities.ts';
import type { Subscription } from '../subscriptions/entities.ts';
import { MeteredBilling } from './entities.ts';

/** The database's clock (events' `created_at` comes from the API processes; all compare against it). */
export async function databaseNow(em: EntityManager): Promise<Date> {
  const { rows } = await runSql<{ now: Date | string }>(em, 'select clock_timestamp() as now');
  return new Date(rows[0]!.now);
}

export interface UsageQuote {
  price: ProductPrice;
  meter: Meter;
  periodStart: Date;
  periodEnd: Date;
  billedThrough: Date;
  /** Credited units − consumed so far, before this line. */
  creditBalance: string;
  credited: string;
  line: MeteredLine;
}

/** The live metered prices of the subscription's product (needs `product.prices.meter` loaded). */
export function meteredPrices(s: Subscription): ProductPrice[] {
  return s.product.prices
    .getItems()
    .filter((p) => p.amountType === 'metered_unit' && !p.isArchived && p.meter && p.unitAmount != null);
}

/** What one statement answers per meter: the usage not billed yet, the credits granted and those consumed. */
export interface MeterFigures {
  usage: string;
  credited: string;
  consumed: string;
}

/**
 * For each meter, in one statement: the meter's aggregation over the customer's events of
 * {timestamp < periodEnd, created_at ≤ billedThrough} minus the set the subscription's previous
 * renewal of that meter billed (none yet: every event before `periodStart` counts as billed), the
 * units credited to the customer (meter_credit grants, cycles and revocations; their bookkeeping
 * events are never usage) and those renewals consumed so far.
 *
 * `billedThrough` is a time, or `{ settleMs }`: the database's clock at the statement minus that
 * (millisecond precision, as it is stored), answered with the figures.
 */
export async function meterFigures(
  em: EntityManager,
  q: {
    organizationId: string;
    subscriptionId: string;
    customer: { id: string; externalId: string | null };
    meters: Pick<Meter, 'id' | 'filter' | 'aggregation'>[];
    periodStart: Date;
    periodEnd: Date;
    billedThrough: Date | { settleMs: number };
  },
): Promise<{ billedThrough: Date; figures: MeterFigures[] }> {
  const params = new SqlParams();
  const org = params.add(q.organizationId, 'uuid');
  const customer = params.add(q.customer.id, 'uuid');
  const subscription = params.add(q.subscriptionId, 'uuid');
  const credited = params.add(METER_CREDITED_EVENT, 'text');
  const periodEndAt = params.add(q.periodEnd.toISOString(), 'timestamptz');
  const periodStartAt = params.add(q.periodStart.toISOString(), 'timestamptz');
  const through =
    q.billedThrough instanceof Date
      ? params.add(q.billedThrough.toISOString(), 'timestamptz')
      : `date_trunc('milliseconds', statement_timestamp() - ${params.add(q.billedThrough.settleMs, 'int')} * interval '1 millisecond')`;
  // Events by customer id, or by the customer's external id in its organization (as eventConditions).
  const byCustomer = q.customer.externalId
    ? `(e."customer_id" = ${customer} or e."external_customer_id" = ${params.add(q.customer.externalId, 'text')})`
    : `e."customer_id" = ${customer}`;
  const parts = q.meters.map((meter, i) => {
    const id = params.add(meter.id, 'uuid');
    return `select ${i} as i, (
        select (${compileAggregation(meter.aggregation, params, 'e.')})::numeric::text from "events" e
         where e."organization_id" = ${org} and ${byCustomer} and ${meterCondition(meter as Meter, params)}
           and e."timestamp" < ${periodEndAt} and e."created_at" <= t.billed_through
           and not (e."timestamp" < coalesce(p.period_end, ${periodStartAt}) and e."created_at" <= coalesce(p.billed_through, 'infinity'))
           and not (e."source" = 'system' and e."name" = ${credited})
      ) as usage, (
        select coalesce(sum(case when jsonb_typeof(e."metadata" -> 'units') = 'number' then (e."metadata" ->> 'units')::numeric end), 0)::text from "events" e
         where e."organization_id" = ${org} and e."customer_id" = ${customer} and e."source" = 'system' and e."name" = ${credited}
           and e."metadata" ->> 'meter_id' = ${id}::text
      ) as credited, (
        select coalesce(sum(b."credits_used"), 0)::text from "metered_billings" b where b."customer_id" = ${customer} and b."meter_id" = ${id}
      ) as consumed, t.billed_through
      from t left join lateral (
        select b."period_end", b."billed_through" from "metered_billings" b
         where b."subscription_id" = ${subscription} and b."meter_id" = ${id} order by b."period_end" desc limit 1
      ) p on true`;
  });
  const { rows } = await runSql<{ i: number; usage: string | null; credited: string; consumed: string; billed_through: Date | string }>(
    em,
    `with t as (select ${through} as billed_through) ${parts.join(' union all ')}`,
    params.values,
  );
  const byIndex = new Map(rows.map((r) => [Number(r.i), r]));
  const billedThrough = rows[0] ? new Date(rows[0].billed_through) : q.billedThrough instanceof Date ? q.billedThrough : await databaseNow(em);
  return {
    billedThrough,
    figures: q.meters.map((_, i) => {
      const r = byIndex.get(i);
      return { usage: r?.usage ?? '0', credited: r?.credited ?? '0', consumed: r?.consumed ?? '0' };
    }),
  };
}

/**
 * What the subscription's metered prices bill for the period [periodStart, periodEnd) with events
 * ingested up to `billedThrough` (or the database's clock minus `settleMs`): one quote per price,
 * credits consumed first (in price order when several prices share a meter). One statement for all
 * of them (meterFigures); none without metered prices.
 */
export async function quoteUsage(
  em: EntityManager,
  s: Subscription,
  period: { periodStart: Date; periodEnd: Date; billedThrough: Date | { settleMs: number } },
): Promise<UsageQuote[]> {
  const prices = meteredPrices(s);
  if (!prices.length) return [];
  for (const price of prices) if (!price.meter!.filter) await em.populate(price, ['meter']);
  const meters = [...new Map(prices.map((p) => [p.meter!.id, p.meter!])).values()];
  if (!wrap(s.customer).isInitialized()) await em.populate(s, ['customer']);
  const { billedThrough, figures } = await meterFigures(em, {
    organizationId: s.organization.id,
    subscriptionId: s.id,
    customer: { id: s.customer.id, externalId: s.customer.externalId ?? null },
    meters,
    periodStart: period.periodStart,
    periodEnd: period.periodEnd,
    billedThrough: period.billedThrough,
  });
  const figuresOf = new Map(meters.map((m, i) => [m.id, figures[i]!]));
  return usageLines(prices, figuresOf).map(({ price, creditBalance, credited, line }) => ({
    price,
    meter: price.meter!,
    periodStart: period.periodStart,
    periodEnd: period.periodEnd,
    billedThrough,
    creditBalance,
    credited,
    line,
  }));
}

/**
 * The lines of the metered prices (in price order) from their meters' figures: credits consumed
 * first, in price order when several prices share a meter. No database (the plain-SQL renewal,
 * subscriptions/renewal-sql.ts, uses it too).
 */
export function usageLines<P extends { unitAmount?: string | null; capAmount?: number | null; meter?: { id: string } | null }>(
  prices: P[],
  figuresOf: Map<string, MeterFigures>,
): { price: P; creditBalance: string; credited: string; line: MeteredLine }[] {
  const out: { price: P; creditBalance: string; credited: string; line: MeteredLine }[] = [];
  const usedInQuote = new Map<string, string>();
  for (const price of prices) {
    const meter = price.meter!;
    const { usage, credited, consumed } = figuresOf.get(meter.id)!;
    const balance = subtractStrings(subtractStrings(credited, consumed), usedInQuote.get(meter.id) ?? '0');
    const line = meteredLine({ usage, creditBalance: balance, unitAmount: price.unitAmount!, capAmount: price.capAmount ?? null });
    // Several prices on one meter: the credits one line used are gone for the next.
    usedInQuote.set(meter.id, subtractStrings(usedInQuote.get(meter.id) ?? '0', `-${line.creditsUsed}`.replace('--', '')));
    out.push({ price, creditBalance: balance, credited, line });
  }
  return out;
}

/** a − b, exact. */
const subtractStrings = (a: string, b: string) => formatDecimal(subtractDecimal(parseDecimal(a), parseDecimal(b)));

/** Records what a renewal billed (same transaction as its order). */
export function recordUsage(em: EntityManager, s: Subscription, quotes: UsageQuote[], orderId: string | null): void {
  for (const q of quotes) {
    em.create(MeteredBilling, {
      subscription: s,
      customer: s.customer,
      meter: q.meter,
      price: q.price,
      order: orderId,
      periodStart: q.periodStart,
      periodEnd: q.periodEnd,
      billedThrough: q.billedThrough,
      usage: q.line.usage,
      creditsUsed: q.line.creditsUsed,
      billableUnits: q.line.billableUnits,
      unitAmount: q.price.unitAmount!,
      capAmount: q.price.capAmount ?? null,
      amount: q.line.amount,
    });
  }
}
