/**
 * `github_repository`: collaborator access to a GitHub repository with the given permission.
 * Granting (inviting the buyer through the GitHub App) comes with the GitHub integration.
 */
import { z } from 'zod/v4';
import { BenefitActionUnavailable, sameJson, type BenefitTypeStrategy } from './strategy.ts';

export const GITHUB_PERMISSIONS = ['pull', 'triage', 'push', 'maintain', 'admin'] as const;

const propertiesSchema = z.object({
  repository_owner: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/, { message: 'Must be a GitHub user or organization name' }),
  repository_name: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._-]{1,100}$/, { message: 'Must be a GitHub repository name' }),
  permission: z.enum(GITHUB_PERMISSIONS),
});

export const githubRepositoryStrategy: BenefitTypeStrategy<z.infer<typeof propertiesSchema>> = {
  type: 'github_repository',
  propertiesSchema,
  readPropertiesSchema: propertiesSchema,
  async validateProperties(_ctx, input) {
    return { repository_owner: input.repository_owner, repository_name: input.repository_name, permission: input.permission };
  },
  serializeProperties(stored) {
    return {
      repository_owner: stored.repository_owner as string,
      repository_name: stored.repository_name as string,
      permission: stored.permission as string,
    };
  },
  requiresUpdate(previous, current) {
    return !sameJson(previous, current);
  },
  async grant() {
    throw new BenefitActionUnavailable('github_repository', 'grant');
  },
  async revoke() {
    throw new BenefitActionUnavailable('github_repository', 'revoke');
  },
};
