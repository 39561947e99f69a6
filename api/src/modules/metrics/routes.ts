/** /v1/metrics: the limits of the metrics ranges (the metrics query itself belongs to its own issue). */
import { z } from 'zod/v4';
import { route } from '../../kit/routes.ts';
import { INTERVAL_MAX_DAYS, METRICS_MIN_DATE } from './limits.ts';

const intervalLimit = z.object({ max_days: z.number().int() });

export const metricsLimitsSchema = z.object({
  min_date: z.string(),
  intervals: z.object({ hour: intervalLimit, day: intervalLimit, week: intervalLimit, month: intervalLimit, year: intervalLimit }),
});

export const routes = [
  route({
    method: 'get',
    path: '/v1/metrics/limits',
    summary: 'Earliest date and longest range per interval for metrics',
    tags: ['metrics'],
    auth: { kinds: ['user', 'organization', 'oauth2'], scopes: ['metrics:read'] },
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
