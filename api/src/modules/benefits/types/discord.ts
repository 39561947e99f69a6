/**
 * `discord`: a role in a Discord server. The seller sends the role and either the server id or the
 * guild token the bot-install flow hands out (a JWT whose payload carries `guild_id`, as the public
 * API's). The guild token is write-only: stored, never returned; the read model's `guild_token` is an
 * empty string (the SDK requires the key), and an update that omits it or sends it empty keeps the
 * stored one. Granting (adding the role through the bot) comes with the Discord integration.
 */
import { z } from 'zod/v4';
import { BenefitActionUnavailable, propertiesError, type BenefitTypeStrategy } from './strategy.ts';

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
  async grant() {
    throw new BenefitActionUnavailable('discord', 'grant');
  },
  async revoke() {
    throw new BenefitActionUnavailable('discord', 'revoke');
  },
};
