/**
 * How far back metrics go and how long a range each interval may span (the public API's values).
 *
 * `min_date` is a fixed 2023-01-01 rather than the earliest organization's creation date: it is
 * the same for every caller (no query, nothing leaked about other organizations' age), it never
 * moves under a client that cached it, and it predates every organization this platform can hold.
 */
export const METRICS_MIN_DATE = '2023-01-01';

export const INTERVAL_MAX_DAYS = {
  hour: 7,
  day: 366,
  week: 365,
  month: 1460,
  year: 3650,
} as const;

export type MetricsInterval = keyof typeof INTERVAL_MAX_DAYS;

/** True when [start, end] spans more days than the interval allows. */
export function exceedsIntervalLimit(interval: MetricsInterval, start: Date, end: Date): boolean {
  return (end.getTime() - start.getTime()) / 86_400_000 > INTERVAL_MAX_DAYS[interval];
}
