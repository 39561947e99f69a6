/**
 * `downloadables`: files (service `downloadable`) the buyer may download. `archived` hides a file from
 * new buyers while existing ones keep it; `active_files` (read model) lists the others. Granting
 * records the files the customer may download (`properties.files`: the active files, plus files granted
 * earlier that are archived since and still attached); the portal lists them with short-lived links.
 */
import { z } from 'zod/v4';
import { File } from '../../files/entities.ts';
import { propertiesError, type BenefitTypeStrategy } from './strategy.ts';

const propertiesSchema = z.object({
  archived: z.record(z.uuid(), z.boolean()).optional(),
  files: z.array(z.uuid()).min(1).max(100),
});

export function activeFiles(stored: Record<string, unknown>): string[] {
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
  async grant(_ctx, { benefit, grantProperties }) {
    const attached = (benefit.properties.files ?? []) as string[];
    const kept = ((grantProperties.files ?? []) as string[]).filter((id) => attached.includes(id));
    const files = [...new Set([...kept, ...activeFiles(benefit.properties)])];
    return { files: attached.filter((id) => files.includes(id)) };
  },
  async revoke(_ctx, { grantProperties }) {
    // The files stay listed on the grant for the record; a revoked grant gives no download.
    return grantProperties;
  },
};
