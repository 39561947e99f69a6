/**
 * `discord`: a role in a Discord server. The seller sends the role and either the server id or the
 * guild token the bot-install flow hands out (a JWT whose payload carries `guild_id`, as the public
 * API's). The guild token is write-only: stored, never returned; the read model's `guild_token` is an
 * empty string (the SDK requires the key), and an update that omits it or sends it empty keeps the
 * stored one. Granting adds the role to the customer's chosen Discord account (`account_id` on the
 * grant, picked in the portal) through the bot; without an account the grant stays pending. Revoking
 * removes the role the grant recorded.
 */
import { z } from 'zod/v4';
import { GrantPending, integrationsOf, propertiesError, type BenefitTypeStrategy } from './strategy.ts';

const snowflake = z.string().trim().regex(/^\d{1,32}$/, { message: 'Must be a Discord id (digits)' });

const propertiesSchema = z.object({
  guild_id: snowflake.nullish(),
  guild_token: z.string().max(4096).nullish(),
  role_id: snowflake,
});

/** The `guild_id` claim of a JWT-shaped guild token, if any. */
export function guildIdFromToken(token: string | null | undefined): string | null {
  const parts = token?.split('.');
  if (!parts || parts.length !== 3) return null;
  try {
    const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as { guild_id?: unknown };
    return typeof payload.guild_id === 'string' && /^\d{1,32}$/.test(payload.guild_id) ? payload.guild_id : null;
  } catch {
    return null;
  }
}

export const discordStrategy: BenefitTypeStrategy<z.infer<typeof propertiesSchema>> = {
  type: 'discord',
  propertiesSchema,
  readPropertiesSchema: z.object({ guild_id: z.string(), role_id: z.string(), guild_token: z.string() }),
  async validateProperties(ctx, input) {
    const token = input.guild_token ? input.guild_token : ((ctx.previous?.guild_token as string | undefined) ?? null);
    const guildId = input.guild_id ?? guildIdFromToken(input.guild_token) ?? (ctx.previous?.guild_id as string | undefined);
    if (!guildId) {
      throw propertiesError(['guild_id'], 'Field required: send guild_id, or a guild_token issued for the server.');
    }
    return { guild_id: guildId, role_id: input.role_id, ...(token ? { guild_token: token } : {}) };
  },
  serializeProperties(stored) {
    return { guild_id: stored.guild_id as string, role_id: stored.role_id as string, guild_token: '' };
  },
  requiresUpdate(previous, current) {
    return previous.guild_id !== current.guild_id || previous.role_id !== current.role_id;
  },
  async grant(ctx, { benefit, grantProperties }) {
    const accountId = grantProperties.account_id as string | undefined;
    if (!accountId) throw new GrantPending('No Discord account selected for this grant.');
    const guildId = benefit.properties.guild_id as string;
    const roleId = benefit.properties.role_id as string;
    // A grant that gave another role (the benefit changed) takes it back first.
    const prev = { guild: grantProperties.guild_id as string | undefined, role: grantProperties.role_id as string | undefined };
    const prevUser = grantProperties.granted_user_id as string | undefined;
    if (prevUser && prev.guild && prev.role && (prev.guild !== guildId || prev.role !== roleId)) {
      await integrationsOf(ctx).discord.removeRole(prev.guild, prevUser, prev.role);
    }
    await integrationsOf(ctx).discord.addRole(guildId, accountId, roleId);
    return {
      account_id: accountId,
      account_username: (grantProperties.account_username as string | undefined) ?? null,
      guild_id: guildId,
      role_id: roleId,
      granted_user_id: accountId,
    };
  },
  async revoke(ctx, { benefit, grantProperties }) {
    const userId = grantProperties.granted_user_id as string | undefined;
    if (userId) {
      await integrationsOf(ctx).discord.removeRole(
        (grantProperties.guild_id as string | undefined) ?? (benefit.properties.guild_id as string),
        userId,
        (grantProperties.role_id as string | undefined) ?? (benefit.properties.role_id as string),
      );
    }
    const { granted_user_id: _done, ...rest } = grantProperties;
    return rest;
  },
};
