/**
 * `github_repository`: collaborator access to a GitHub repository with the given permission.
 * Granting invites the customer's chosen GitHub account (`account_id` / `account_username` on the
 * grant, picked in the portal) as a collaborator through the GitHub adapter; without an account the
 * grant stays pending. Revoking cancels the invitation / removes the collaborator the grant recorded.
 */
import { z } from 'zod/v4';
import { GrantPending, integrationsOf, sameJson, type BenefitTypeStrategy } from './strategy.ts';

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
  async grant(ctx, { benefit, grantProperties }) {
    const accountId = grantProperties.account_id as string | undefined;
    const username = grantProperties.account_username as string | undefined;
    const repo = { owner: benefit.properties.repository_owner as string, name: benefit.properties.repository_name as string };
    const permission = benefit.properties.permission as string;
    if (!accountId || !username) throw new GrantPending('No GitHub account selected for this grant.');
    // A grant that acted on another repository (the benefit changed) leaves it first.
    const previousOwner = grantProperties.repository_owner as string | undefined;
    const previousName = grantProperties.repository_name as string | undefined;
    if (grantProperties.granted_username && previousOwner && previousName && (previousOwner !== repo.owner || previousName !== repo.name)) {
      await integrationsOf(ctx).github.removeCollaborator({ owner: previousOwner, name: previousName }, grantProperties.granted_username as string);
    }
    await integrationsOf(ctx).github.addCollaborator(repo, username, permission);
    return {
      account_id: accountId,
      account_username: username,
      repository_owner: repo.owner,
      repository_name: repo.name,
      permission,
      granted_username: username,
    };
  },
  async revoke(ctx, { benefit, grantProperties }) {
    const username = grantProperties.granted_username as string | undefined;
    if (username) {
      await integrationsOf(ctx).github.removeCollaborator(
        {
          owner: (grantProperties.repository_owner as string | undefined) ?? (benefit.properties.repository_owner as string),
          name: (grantProperties.repository_name as string | undefined) ?? (benefit.properties.repository_name as string),
        },
        username,
      );
    }
    const { granted_username: _done, ...rest } = grantProperties;
    return rest;
  },
};
