/** OAuth2 / access-token scopes (SPEC section 6). */
const readWrite = [
  'organizations', 'custom_fields', 'discounts', 'checkout_links', 'checkouts', 'products', 'benefits', 'events',
  'meters', 'files', 'subscriptions', 'customers', 'refunds', 'webhooks', 'license_keys', 'repositories', 'issues',
  'customer_portal',
] as const;

export const SCOPES = [
  'openid', 'profile', 'email', 'user:read', 'admin', 'web_default',
  ...readWrite.flatMap((r) => [`${r}:read`, `${r}:write`]),
  'customer_sessions:write', 'orders:read', 'metrics:read', 'external_organizations:read',
] as const;

export type Scope = (typeof SCOPES)[number];

/** Scopes an organization access token may hold (not the user-only ones). */
export const ORGANIZATION_TOKEN_SCOPES: readonly string[] = SCOPES.filter(
  (s) => !['openid', 'profile', 'email', 'user:read', 'admin', 'web_default'].includes(s),
);
