/** `custom`: a note shown to the buyer; no side effect when granted. */
import { z } from 'zod/v4';
import type { BenefitTypeStrategy } from './strategy.ts';

const propertiesSchema = z.object({ note: z.string().max(10_000).nullish() });

export const customStrategy: BenefitTypeStrategy<z.infer<typeof propertiesSchema>> = {
  type: 'custom',
  propertiesSchema,
  readPropertiesSchema: z.object({ note: z.string().nullable() }),
  async validateProperties(_ctx, input) {
    return { note: input.note ?? null };
  },
  serializeProperties(stored) {
    return { note: (stored.note as string | null | undefined) ?? null };
  },
  requiresUpdate() {
    return false;
  },
  async grant() {
    return {};
  },
  async revoke() {
    return {};
  },
};
