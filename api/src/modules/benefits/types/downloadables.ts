/**
 * `downloadables`: files (service `downloadable`) the buyer may download. `archived` hides a file from
 * new buyers while existing ones keep it; `active_files` (read model) lists the others. Granting
 * (creating the customer's downloadables) comes with the customer portal.
 */
import { z } from 'zod/v4';
import { File } from '../../files/entities.ts';
import { BenefitActionUnavailable, propertiesError, type BenefitTypeStrategy } from './strategy.ts';

const propertiesSchema = z.object({
  archived: z.record(z.uuid(), z.boolean()).optional(),
  files: z.array(z.uuid()).min(1).max(100),
});

function activeFiles(stored: Record<string, unknown>): string[] {
  const archived = (stored.archived ?? {}) as Record<string, boolean>;
  return ((stored.files ?? []) as string[]).filter((id) => !archived[id]);
}

export const downloadablesStrategy: BenefitTypeStrategy<z.infer<typeof propertiesSchema>> = {
  type: 'downloadables',
  propertiesSchema,
  readPropertiesSchema: z.object({
    archived: z.record(z.string(), z.boolean()),
    files: z.array(z.uuid()),
    active_files: z.array(z.uuid()),
  }),
  async validateProperties(ctx, input) {
    const files = [...new Set(input.files)];
    const found = await ctx.em.find(
      File,
      { id: { $in: files }, organization: ctx.organizationId, service: 'downloadable', deletedAt: null },
      { fields: ['id'] },
    );
    const ok = new Set(found.map((f) => f.id));
    input.files.forEach((id, index) => {
      if (!ok.has(id)) throw propertiesError(['files', index], 'File not found.', id);
    });
    const archived = Object.fromEntries(Object.entries(input.archived ?? {}).filter(([id]) => files.includes(id)));
    return { archived, files };
  },
  serializeProperties(stored) {
    return {
      archived: (stored.archived ?? {}) as Record<string, boolean>,
      files: (stored.files ?? []) as string[],
      active_files: activeFiles(stored),
    };
  },
  requiresUpdate(previous, current) {
    const a = activeFiles(previous);
    const b = activeFiles(current);
    return a.length !== b.length || a.some((id) => !b.includes(id));
  },
  async grant() {
    throw new BenefitActionUnavailable('downloadables', 'grant');
  },
  async revoke() {
    throw new BenefitActionUnavailable('downloadables', 'revoke');
  },
};
