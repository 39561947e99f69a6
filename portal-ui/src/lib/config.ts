/** This installation's checkout/portal configuration (`GET /v1/customer-portal/config`), read once per page load. */
import { getJson } from '../api.ts';

export interface PortalConfig {
  payment_processor: 'sandbox' | 'stripe';
  stripe_publishable_key: string | null;
  oauth_platforms: ('github' | 'discord')[];
}

let cached: Promise<PortalConfig> | null = null;

export function portalConfig(): Promise<PortalConfig> {
  cached ??= getJson<PortalConfig>('/v1/customer-portal/config').catch((e: unknown) => {
    cached = null;
    throw e;
  });
  return cached;
}
