/**
 * `meter_credit`: credits `units` on one of the organization's meters each period; `rollover` keeps
 * unused units. Granting writes a `meter_credited` system event (negative units on revoke); that
 * comes with the events/billing issue.
 */
import { z } from 'zod/v4';
import { Meter } from '../../meters/entities.ts';
import { BenefitActionUnavailable, propertiesError, sameJson, type BenefitTypeStrategy } from './strategy.ts';

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
  async grant() {
    throw new BenefitActionUnavailable('meter_credit', 'grant');
  },
  async revoke() {
    throw new BenefitActionUnavailable('meter_credit', 'revoke');
  },
};
