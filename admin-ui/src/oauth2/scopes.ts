/** OAuth2 scopes in words, for the consent page and the lists of applications. */
const RESOURCES: Record<string, string> = {
  organizations: 'organizations',
  custom_fields: 'custom fields',
  discounts: 'discounts',
  checkout_links: 'checkout links',
  checkouts: 'checkouts',
  products: 'products',
  benefits: 'benefits',
  events: 'events',
  meters: 'meters',
  files: 'files',
  subscriptions: 'subscriptions',
  customers: 'customers',
  refunds: 'refunds',
  webhooks: 'webhooks',
  license_keys: 'license keys',
  repositories: 'repositories',
  issues: 'issues',
  customer_portal: 'the customer portal',
  orders: 'orders',
  metrics: 'metrics',
  external_organizations: 'external organizations',
  customer_sessions: 'customer sessions',
};

const FIXED: Record<string, string> = {
  openid: 'Know who you are',
  profile: 'See your name',
  email: 'See your email address',
  'user:read': 'Read your account',
  admin: 'Administer your account',
};

export function describeScope(scope: string): string {
  if (FIXED[scope]) return FIXED[scope];
  const [resource, access] = scope.split(':');
  const what = RESOURCES[resource ?? ''] ?? resource;
  return access === 'write' ? `Create, change and delete ${what}` : `Read ${what}`;
}
