/**
 * The ingest route's fast body check never disagrees with the schema: whatever it accepts,
 * `eventsIngestSchema` accepts unchanged (random bodies near the rules' edges, valid and invalid);
 * typical SDK batches take the fast path; the route's schema documents exactly what the schema does.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod/v4';
import { acceptsIngestBody } from '../../api/src/modules/events/fast-validation.ts';
import { eventsIngestRequestSchema, eventsIngestSchema } from '../../api/src/modules/events/schemas.ts';

const uuid = fc.oneof(fc.uuid(), fc.constantFrom('00000000-0000-0000-0000-000000000000', 'not-a-uuid', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'));
const text = (max: number) => fc.oneof(fc.string({ maxLength: 4 }), fc.string({ minLength: max - 1, maxLength: max + 1 }));
const timestamp = fc.oneof(
  fc.date({ min: new Date('1890-01-01'), max: new Date('9999-12-31'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom(
    '2025-02-29T10:00:00Z',
    '2024-02-29T10:00:00Z',
    '2025-04-31T00:00:00+02:00',
    '2025-01-01T24:00:00Z',
    '2025-01-01T10:00Z',
    '2025-01-01T10:00:00.1234567891Z',
    '2025-01-01T10:00:00+14:00',
    '2025-01-01T10:00:00-23:59',
    '2025-01-01 10:00:00Z',
    '1899-12-31T23:59:59Z',
  ),
);
const metadataValue = fc.oneof(
  text(500),
  fc.integer(),
  fc.constantFrom(1.5, Number.MAX_SAFE_INTEGER + 1, -0, NaN),
  fc.boolean(),
  fc.constant(null),
  fc.constant({ nested: 1 }),
);
const metadata = fc.oneof(
  fc.dictionary(text(40), metadataValue, { maxKeys: 4 }),
  fc.dictionary(fc.string({ minLength: 1, maxLength: 3 }), fc.integer(), { minKeys: 49, maxKeys: 52 }),
  fc.constantFrom([], 'x', null),
);
const event = fc.record(
  {
    name: fc.oneof(text(255), fc.constant(3)),
    timestamp,
    metadata,
    organization_id: fc.oneof(uuid, fc.constant(null)),
    customer_id: fc.oneof(uuid, fc.constant(null)),
    external_customer_id: text(255),
    extra: fc.string(),
  },
  { requiredKeys: [] },
);
const validEvent = fc.record(
  {
    name: fc.string({ minLength: 1, maxLength: 20 }),
    timestamp: fc.date({ min: new Date('2000-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
    metadata: fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean()), { maxKeys: 4 }),
    organization_id: fc.oneof(fc.uuid(), fc.constant(null)),
    customer_id: fc.uuid(),
    external_customer_id: fc.string({ minLength: 1, maxLength: 20 }),
  },
  { requiredKeys: ['name'] },
);
const body = fc.oneof(
  { arbitrary: fc.record({ events: fc.array(fc.oneof({ arbitrary: validEvent, weight: 6 }, { arbitrary: event, weight: 1 }), { maxLength: 4 }) }), weight: 3 },
  fc.record({ events: fc.array(event, { maxLength: 4 }) }),
  fc.record({ events: fc.array(event, { minLength: 1, maxLength: 3 }), other: fc.string() }),
  fc.constantFrom(null, [], { events: 'x' }),
);

describe('ingest body validation', () => {
  it('accepts only what the schema accepts unchanged', () => {
    let fast = 0;
    fc.assert(
      fc.property(body, (b) => {
        if (!acceptsIngestBody(b)) return;
        fast++;
        const parsed = eventsIngestSchema.safeParse(b);
        expect(parsed.success).toBe(true);
        expect(parsed.data).toEqual(b);
      }),
      { numRuns: 5000 },
    );
    expect(fast).toBeGreaterThan(50);
  });

  it('takes the fast path for a typical batch, and gives zod answers otherwise', () => {
    const events = Array.from({ length: 3 }, (_, i) => ({
      name: 'api.call',
      timestamp: new Date(Date.UTC(2025, 0, 1, i)).toISOString(),
      customer_id: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
      metadata: { tokens: i, model: 'gpt-4', cached: i === 0 },
    }));
    expect(acceptsIngestBody({ events })).toBe(true);
    expect(eventsIngestRequestSchema.safeParse({ events })).toEqual({ success: true, data: { events } });
    const bad = { events: [{ ...events[0], timestamp: '2025-02-30T00:00:00Z' }] };
    expect(acceptsIngestBody(bad)).toBe(false);
    const answer = eventsIngestRequestSchema.safeParse(bad);
    expect(answer.success).toBe(false);
    expect(answer.error?.issues.map((i) => i.path)).toEqual(eventsIngestSchema.safeParse(bad).error?.issues.map((i) => i.path));
  });

  it('documents the same body as the schema', () => {
    for (const io of ['input', 'output'] as const) {
      expect(z.toJSONSchema(eventsIngestRequestSchema, { io, unrepresentable: 'any', target: 'draft-2020-12' })).toEqual(
        z.toJSONSchema(eventsIngestSchema, { io, unrepresentable: 'any', target: 'draft-2020-12' }),
      );
    }
  });
});
