/** /v1/metrics: the figures per period (computed in SQL, service.ts) and the limits of the ranges. */
import { z } from 'zod/v4';
import { fieldError } from '../../kit/errors.ts';
import type { AuthRequirement } from '../../kit/principals.ts';
import { route } from '../../kit/routes.ts';
import { isoDate, queryList } from '../../kit/validation.ts';
import { sellerAuth } from '../../kit/route-helpers.ts';
import { scopedOrganizationIds } from '../organizations/scope.ts';
import { INTERVAL_MAX_DAYS, METRICS_MIN_DATE, exceedsIntervalLimit, type MetricsInterval } from './limits.ts';
import { RawJson } from '../../kit/read-sql.ts';
import { METRIC_DEFINITIONS, METRIC_SLUGS, bucketsAnswer, computeMetrics, metricsPeriodsJsonFromBuckets, type MetricSlug } from './service.ts';

const intervalLimit = z.object({ max_days: z.number().int() });

export const metricsLimitsSchema = z.object({
  min_date: z.string(),
  intervals: z.object({ hour: intervalLimit, day: intervalLimit, week: intervalLimit, month: intervalLimit, year: intervalLimit }),
});

const INTERVALS = Object.keys(INTERVAL_MAX_DAYS) as [MetricsInterval, ...MetricsInterval[]];

/**
 * Zone names found valid: building an `Intl.DateTimeFormat` to test one costs 0.1-0.4 ms of CPU per
 * request. Only names the runtime accepted are kept, and at most `KNOWN_TIMEZONES_MAX` of them (the
 * runtime also accepts every upper/lower-case spelling of a name).
 */
const knownTimezones = new Set<string>();
const KNOWN_TIMEZONES_MAX = 2000;

function isKnownTimezone(tz: string): boolean {
  if (knownTimezones.has(tz)) return true;
  if (!/^[A-Za-z0-9_+\-/]+$/.test(tz)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    return false;
  }
  if (knownTimezones.size < KNOWN_TIMEZONES_MAX) knownTimezones.add(tz);
  return true;
}

/** An IANA time zone name both the runtime and PostgreSQL know (`UTC`, `Europe/Paris`, ...). */
const timezoneSchema = z
  .string()
  .max(64)
  .refine(
    isKnownTimezone,
    { message: 'Unknown time zone' },
  )
  // The document lists the canonical names (aliases such as `US/Eastern` are accepted too).
  .meta({ enum: [...new Set(['UTC', ...Intl.supportedValuesOf('timeZone')])] });

export const metricsQuerySchema = z.object({
  start_date: isoDate(),
  end_date: isoDate(),
  interval: z.enum(INTERVALS),
  timezone: timezoneSchema.default('UTC'),
  organization_id: queryList(z.uuid()).optional(),
  product_id: queryList(z.uuid()).optional(),
  billing_type: queryList(z.enum(['one_time', 'recurring'])).optional(),
  customer_id: queryList(z.uuid()).optional(),
});

const periodSchema = z.object({
  timestamp: z.string(),
  ...(Object.fromEntries(METRIC_SLUGS.map((s) => [s, z.number().int()])) as Record<MetricSlug, z.ZodNumber>),
});
const metricSchema = z.object({ slug: z.string(), display_name: z.string(), type: z.enum(['scalar', 'currency']) });

export const metricsResponseSchema = z.object({
  periods: z.array(periodSchema),
  metrics: z.object(Object.fromEntries(METRIC_SLUGS.map((s) => [s, metricSchema])) as Record<MetricSlug, typeof metricSchema>),
});

const READ: AuthRequirement = sellerAuth('metrics:read');

/** The response's `metrics` (the definitions), and its JSON text. */
const METRICS = Object.fromEntries(METRIC_SLUGS.map((slug) => [slug, { slug, ...METRIC_DEFINITIONS[slug] }]));
const METRICS_JSON = JSON.stringify(METRICS);

export const routes = [
  route({
    method: 'get',
    path: '/v1/metrics/',
    summary: 'Orders, revenue and subscription figures per period',
    tags: ['metrics'],
    auth: READ,
    query: metricsQuerySchema,
    response: metricsResponseSchema,
    async handler({ query, principal, em }) {
      const start = new Date(`${query.start_date}T00:00:00Z`);
      const end = new Date(`${query.end_date}T00:00:00Z`);
      if (end < start) throw fieldError(['query', 'end_date'], 'end_date must not be before start_date.', 'value_error', query.end_date);
      if (exceedsIntervalLimit(query.interval, start, end)) {
        throw fieldError(
          ['query', 'end_date'],
          `The interval is too big: at most ${INTERVAL_MAX_DAYS[query.interval]} days for ${query.interval}. Reduce the date range or choose a larger interval.`,
          'value_error',
          query.end_date,
        );
      }
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const q = {
        startDate: query.start_date,
        endDate: query.end_date,
        interval: query.interval,
        timezone: query.timezone,
        organizationIds: orgIds,
        productIds: query.product_id,
        billingTypes: query.billing_type,
        customerIds: query.customer_id,
      };
      let periods;
      try {
        // The aggregates' answer as JSON text built by PostgreSQL when they can answer; else the rows.
        const json = bucketsAnswer(q) ? await metricsPeriodsJsonFromBuckets(em, q) : null;
        if (json !== null) return new RawJson(`{"periods":${json},"metrics":${METRICS_JSON}}`);
        periods = await computeMetrics(em, q);
      } catch (err) {
        // A zone name the runtime knows but this PostgreSQL does not.
        if (/time zone .* not recognized/i.test(String((err as Error).message))) {
          throw fieldError(['query', 'timezone'], 'Unknown time zone', 'value_error', query.timezone);
        }
        throw err;
      }
      return {
        periods: periods.map(({ timestamp, ...figures }) => ({ timestamp: timestamp.toISOString(), ...figures })),
        metrics: METRICS,
      };
    },
  }),
  route({
    method: 'get',
    path: '/v1/metrics/limits',
    summary: 'Earliest date and longest range per interval for metrics',
    tags: ['metrics'],
    auth: READ,
    response: metricsLimitsSchema,
    async handler() {
      return {
        min_date: METRICS_MIN_DATE,
        intervals: Object.fromEntries(
          Object.entries(INTERVAL_MAX_DAYS).map(([k, max_days]) => [k, { max_days }]),
        ) as z.infer<typeof metricsLimitsSchema>['intervals'],
      };
    },
  }),
];
