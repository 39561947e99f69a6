/** The social providers the auth service knows (SPEC section 3), in the spec's order. */
export const SOCIAL_PROVIDER_IDS = [
  'apple',
  'discord',
  'facebook',
  'github',
  'microsoft',
  'google',
  'spotify',
  'twitch',
  'twitter',
  'dropbox',
  'kick',
  'linkedin',
  'gitlab',
  'tiktok',
  'reddit',
  'roblox',
  'vk',
  'zoom',
] as const;
export type SocialProviderId = (typeof SOCIAL_PROVIDER_IDS)[number];
