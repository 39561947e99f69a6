/** GET /v1/metrics/limits through the official SDK. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, usageSeller } from './events-helpers.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
});
afterAll(async () => {
  await srv?.close();
});

describe('metrics limits', () => {
  it('gives the earliest date and the longest range per interval', async () => {
    const s = await usageSeller(srv, ['metrics:read']);
    const limits = await s.polar.metrics.limits();
    expect(limits.minDate.toString()).toBe('2023-01-01');
    expect(limits.intervals).toEqual({
      hour: { maxDays: 7 },
      day: { maxDays: 366 },
      week: { maxDays: 365 },
      month: { maxDays: 1460 },
      year: { maxDays: 3650 },
    });
    const raw = await call(srv, s.token, 'GET', '/v1/metrics/limits');
    expect(raw.body).toEqual({
      min_date: '2023-01-01',
      intervals: { hour: { max_days: 7 }, day: { max_days: 366 }, week: { max_days: 365 }, month: { max_days: 1460 }, year: { max_days: 3650 } },
    });
  });

  it('needs a credential (401) with the metrics:read scope (403)', async () => {
    const anon = await call(srv, null, 'GET', '/v1/metrics/limits');
    expect(anon.status).toBe(401);
    expect(anon.body.error).toBe('Unauthorized');
    const s = await usageSeller(srv, ['events:read']);
    const denied = await call(srv, s.token, 'GET', '/v1/metrics/limits');
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('NotPermitted');
  });
});
