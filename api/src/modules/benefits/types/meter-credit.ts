/**
 * `meter_credit`: credits `units` on one of the organization's meters each period; `rollover` keeps
 * unused units. Granting writes a `meter_credited` system event for the customer (metadata: meter_id,
 * units, rollover); revoking writes one with the negated units, so a meter summing `units` over
 * `meter_credited` events gives the customer's balance of credits. Each new billing cycle of a
 * subscription credits the units again (`rollover` is recorded on the events; unused units are not
 * reset by this module).
 */
import { z } from 'zod/v4';
import { Meter } from '../../meters/entities.ts';
import { insertEvents } from '../../events/service.ts';
import { propertiesError, sameJson, type BenefitTypeStrategy } from './strategy.ts';

/** Name of the system event a meter credit grant (or its revocation) writes. */
export const METER_CREDITED_EVENT = 'meter_credited';

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
    return { meter_id: meterId, units };
  },
  async cycle(ctx, { benefit, customer, grantProperties }) {
    const units = benefit.properties.units as number;
    await insertEvents(ctx.em, [
      {
        organizationId: benefit.organization.id,
        name: METER_CREDITED_EVENT,
        timestamp: new Date(),
        customerId: customer.id,
        metadata: { meter_id: benefit.properties.meter_id as string, units, rollover: benefit.properties.rollover as boolean },
      },
    ]);
    // Revoking takes back everything credited so far.
    return { ...grantProperties, units: ((grantProperties.units as number | undefined) ?? 0) + units };
  },
  async revoke(ctx, { benefit, customer, grantProperties }) {
    const units = grantProperties.units as number | undefined;
    const meterId = grantProperties.meter_id as string | undefined;
    if (units && meterId) {
      await insertEvents(ctx.em, [
        {
          organizationId: benefit.organization.id,
          name: METER_CREDITED_EVENT,
          timestamp: new Date(),
          customerId: customer.id,
          metadata: { meter_id: meterId, units: -units, rollover: benefit.properties.rollover as boolean },
        },
      ]);
    }
    return {};
  },
};
