/**
 * `meter_credit`: credits `units` on one of the organization's meters each period; `rollover` keeps
 * unused units. Granting writes a `meter_credited` system event for the customer (metadata: meter_id,
 * units, rollover); revoking writes one with the negated units, so a meter summing `units` over
 * `meter_credited` events gives the customer's balance of credits. Each new billing cycle of a
 * subscription credits the units again. With `rollover: false` the unused part of the previous
 * period's units expires first (a negative `meter_credited` event with `reason: "expired"`): what the
 * ended period's usage did not consume of them, never more than the customer's balance on the meter
 * (balance = credited units − credits consumed by billed usage). Revoking takes back what was
 * credited, never more than that balance, so a customer who used credits is not left owing credits.
 */
import { z } from 'zod/v4';
import { Meter } from '../../meters/entities.ts';
import type { EntityManager } from '../../../kit/db.ts';
import { insertEvents } from '../../events/service.ts';
import { runSql } from '../../events/sql.ts';
import { propertiesError, sameJson, type BenefitTypeStrategy } from './strategy.ts';

/** Name of the system event a meter credit grant (or its revocation) writes. */
export const METER_CREDITED_EVENT = 'meter_credited';

/**
 * The customer's credit balance on the meter (credited − consumed by billed usage), after taking a
 * transaction-scoped lock on (customer, meter) so concurrent cycles or revocations of credits on the
 * same meter apply one after the other.
 */
async function lockedBalance(em: EntityManager, organizationId: string, customerId: string, meterId: string): Promise<number> {
  const { rows } = await runSql<{ balance: string }>(
    em,
    `select (
       (select coalesce(sum(case when jsonb_typeof(e."metadata" -> 'units') = 'number' then (e."metadata" ->> 'units')::numeric end), 0)
          from "events" e
         where e."organization_id" = $1::uuid and e."customer_id" = $2::uuid and e."source" = 'system' and e."name" = $4::text
           and e."metadata" ->> 'meter_id' = $3::uuid::text)
       - (select coalesce(sum(b."credits_used"), 0) from "metered_billings" b where b."customer_id" = $2::uuid and b."meter_id" = $3::uuid)
     )::text as balance
     from (select pg_advisory_xact_lock(hashtextextended($2::uuid::text || ':' || $3::uuid::text, 0))) l`,
    [organizationId, customerId, meterId, METER_CREDITED_EVENT],
  );
  return Number(rows[0]!.balance);
}

const propertiesSchema = z.object({
  units: z.number().int().min(1).max(2_147_483_647),
  meter_id: z.uuid(),
  rollover: z.boolean(),
});

export const meterCreditStrategy: BenefitTypeStrategy<z.infer<typeof propertiesSchema>> = {
  type: 'meter_credit',
  propertiesSchema,
  readPropertiesSchema: propertiesSchema,
  async validateProperties(ctx, input) {
    const meter = await ctx.em.findOne(Meter, { id: input.meter_id, organization: ctx.organizationId }, { fields: ['id'] });
    if (!meter) throw propertiesError(['meter_id'], 'Meter not found.', input.meter_id);
    return { units: input.units, meter_id: input.meter_id, rollover: input.rollover };
  },
  serializeProperties(stored) {
    return { units: stored.units as number, meter_id: stored.meter_id as string, rollover: stored.rollover as boolean };
  },
  requiresUpdate(previous, current) {
    return !sameJson(previous, current);
  },
  async grant(ctx, { benefit, customer, grantProperties, update }) {
    // Refreshing a granted grant credits nothing more (the credit of the period was given).
    if (update) return grantProperties;
    const units = benefit.properties.units as number;
    const meterId = benefit.properties.meter_id as string;
    await insertEvents(ctx.em, [
      {
        organizationId: benefit.organization.id,
        name: METER_CREDITED_EVENT,
        timestamp: new Date(),
        customerId: customer.id,
        metadata: { meter_id: meterId, units, rollover: benefit.properties.rollover as boolean },
      },
    ]);
    return { meter_id: meterId, units, period_units: units };
  },
  async cycle(ctx, { benefit, customer, grantProperties }) {
    const units = benefit.properties.units as number;
    const meterId = benefit.properties.meter_id as string;
    const rollover = benefit.properties.rollover as boolean;
    const credited = (grantProperties.units as number | undefined) ?? 0;
    const events: Parameters<typeof insertEvents>[1] = [];
    let expired = 0;
    if (!rollover && grantProperties.meter_id === meterId) {
      const last = (grantProperties.period_units as number | undefined) ?? units;
      const balance = await lockedBalance(ctx.em, benefit.organization.id, customer.id, meterId);
      expired = Math.max(0, Math.min(last, Math.floor(balance)));
      if (expired > 0) {
        events.push({
          organizationId: benefit.organization.id,
          name: METER_CREDITED_EVENT,
          timestamp: new Date(),
          customerId: customer.id,
          metadata: { meter_id: meterId, units: -expired, rollover, reason: 'expired' },
        });
      }
    }
    events.push({
      organizationId: benefit.organization.id,
      name: METER_CREDITED_EVENT,
      timestamp: new Date(),
      customerId: customer.id,
      metadata: { meter_id: meterId, units, rollover },
    });
    await insertEvents(ctx.em, events);
    // Revoking takes back what is still credited (bounded by the balance then).
    return { ...grantProperties, units: credited - expired + units, period_units: units };
  },
  async revoke(ctx, { benefit, customer, grantProperties }) {
    const units = grantProperties.units as number | undefined;
    const meterId = grantProperties.meter_id as string | undefined;
    if (units && meterId) {
      const balance = await lockedBalance(ctx.em, benefit.organization.id, customer.id, meterId);
      const taken = Math.max(0, Math.min(units, Math.floor(balance)));
      if (taken > 0) {
        await insertEvents(ctx.em, [
          {
            organizationId: benefit.organization.id,
            name: METER_CREDITED_EVENT,
            timestamp: new Date(),
            customerId: customer.id,
            metadata: { meter_id: meterId, units: -taken, rollover: benefit.properties.rollover as boolean },
          },
        ]);
      }
    }
    return {};
  },
};
