/**
 * The one configuration module. Every process (API, worker, local stack, tests) reads its settings
 * from here; a wrong or missing value stops the process at start with a message naming the variable.
 */
import { z } from 'zod/v4';
import { SOCIAL_PROVIDER_IDS, type SocialProviderId } from './auth/social/ids.ts';

/** Embedded defaults: what `npm start` and the tests run when nothing is overridden. */
export const DEFAULTS = {
  PORT: 8000,
  PG_PORT: 5432,
  TEMPORAL_PORT: 7233,
  TEMPORAL_UI_PORT: 8233,
  S3_PORT: 8333,
  SMTP_PORT: 1025,
  MAIL_UI_PORT: 1080,
} as const;

const url = (what: string) =>
  z.string().refine((v) => URL.canParse(v), { message: `must be a URL (${what})` });

const hostPort = z
  .string()
  .regex(/^[^\s:/]+:\d{1,5}$/, { message: 'must be host:port' });

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** `<PROVIDER>_CLIENT_ID` / `<PROVIDER>_CLIENT_SECRET` of every social provider (unset: not offered). */
type SocialCredentialVariables = {
  [K in `${Uppercase<SocialProviderId>}_CLIENT_ID` | `${Uppercase<SocialProviderId>}_CLIENT_SECRET`]: z.ZodOptional<z.ZodString>;
};
const socialCredentialVariables = Object.fromEntries(
  SOCIAL_PROVIDER_IDS.flatMap((id) => [
    [`${id.toUpperCase()}_CLIENT_ID`, z.string().min(1).optional()],
    [`${id.toUpperCase()}_CLIENT_SECRET`, z.string().min(1).optional()],
  ]),
) as SocialCredentialVariables;

const socialEndpoint = z.object({
  authorization: z.url().optional(),
  token: z.url().optional(),
  userinfo: z.url().optional(),
  jwks: z.url().optional(),
  issuer: z.string().min(1).optional(),
});

const DEV_SECRET = 'emporia-development-secret-do-not-use-in-production';

export const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    HOST: z.string().min(1).default('127.0.0.1'),
    PORT: z.coerce.number().int().min(1).max(65535).default(DEFAULTS.PORT),
    PUBLIC_URL: url('where browsers reach the API').default(`http://localhost:${DEFAULTS.PORT}`),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    SECRET: z.string().min(32, { message: 'must be at least 32 characters' }).default(DEV_SECRET),

    DATABASE_URL: url('postgres://user:password@host:port/database')
      .refine((v) => /^postgres(ql)?:$/.test(new URL(v).protocol), { message: 'must be a postgres:// URL' })
      .default(`postgres://postgres:postgres@127.0.0.1:${DEFAULTS.PG_PORT}/emporia`),
    DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),

    TEMPORAL_ADDRESS: hostPort.default(`127.0.0.1:${DEFAULTS.TEMPORAL_PORT}`),
    TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
    TEMPORAL_RETENTION_DAYS: z.coerce.number().min(1).max(3650).default(1),
    TEMPORAL_TASK_QUEUE: z.string().min(1).default('emporia'),
    TEMPORAL_UI_URL: url('Temporal Web UI').default(`http://localhost:${DEFAULTS.TEMPORAL_UI_PORT}`),

    S3_ENDPOINT: url('S3 API endpoint').default(`http://127.0.0.1:${DEFAULTS.S3_PORT}`),
    S3_ACCESS_KEY: z.string().min(3).default('emporia'),
    S3_SECRET_KEY: z.string().min(8).default('emporia-dev-secret-key'),
    S3_REGION: z.string().min(1).default('us-east-1'),
    S3_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9.-]{2,62}$/, { message: 'must be a valid bucket name' }).default('emporia-files'),
    S3_PUBLIC_BUCKET: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{2,62}$/, { message: 'must be a valid bucket name' })
      .default('emporia-public'),

    SMTP_URL: url('smtp://host:port').default(`smtp://127.0.0.1:${DEFAULTS.SMTP_PORT}`),
    MAIL_FROM: z.string().min(3).default('Emporia <no-reply@emporia.local>'),
    MAIL_UI_URL: url('mail catcher UI').default(`http://localhost:${DEFAULTS.MAIL_UI_PORT}`),

    /** Card processor: the built-in sandbox (Stripe test mode behaviour) or Stripe. */
    PAYMENT_PROCESSOR: z.enum(['sandbox', 'stripe']).default('sandbox'),
    /** Stripe.js key (`pk_…`) the hosted checkout loads the Payment Element with when PAYMENT_PROCESSOR=stripe. */
    STRIPE_PUBLISHABLE_KEY: z.string().regex(/^pk_(test|live)_\w+$/, { message: 'must be a Stripe publishable key (pk_…)' }).optional(),
    STRIPE_SECRET_KEY: z.string().regex(/^(sk|rk)_(test|live)_\w+$/, { message: 'must be a Stripe secret key (sk_…)' }).optional(),
    /** Only for tests and proxies: where the Stripe API is reached (default api.stripe.com). */
    STRIPE_API_BASE: url('Stripe API base URL').optional(),

    /** Webhook delivery: per-attempt timeout, retry backoff (base × 2^n, jittered, capped), attempts per event. */
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
    WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(1).default(2_000),
    WEBHOOK_RETRY_MAX_MS: z.coerce.number().int().min(1).default(20 * 60_000),
    WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(10),
    /** An endpoint whose last N events all failed is disabled and its organization's members mailed. */
    WEBHOOK_DISABLE_AFTER: z.coerce.number().int().min(1).max(1000).default(10),
    /**
     * Webhooks may go to loopback, private and other non-public addresses, over plain http. Unset means
     * on in development and tests (local receivers), off in production (https to public addresses only).
     */
    WEBHOOK_ALLOW_PRIVATE_URLS: bool.optional(),
    /**
     * How long the dispatcher waits before it takes over webhook work a crashed worker left: a first
     * attempt claimed but never recorded (its lease is 2 × WEBHOOK_TIMEOUT_MS + this), or a failed
     * attempt whose retry workflow was never started.
     */
    WEBHOOK_RECOVERY_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
    /**
     * Usage billing (docs/billing.md): a renewal bills the events ingested up to this long before it;
     * later ones (an ingest transaction still in flight) are billed by the next renewal.
     */
    USAGE_SETTLE_SECONDS: z.coerce.number().int().min(0).max(3600).default(10),

    /**
     * Secret of the auth service's payments webhook receiver (`POST /api/auth/polar/webhooks`,
     * Standard Webhooks signatures keyed with the UTF-8 bytes of the whole string). Unset: the route
     * answers 404 "Webhooks not enabled".
     */
    POLAR_WEBHOOK_SECRET: z.string().min(1).optional(),
    /**
     * The seller organization (id or slug) the auth service's payments routes act for: GET
     * /api/auth/checkout, /checkout/{slug}, /portal, /state, and the user → customer sync on sign-up
     * and update-user. Unset: those routes answer "Checkout is not enabled" / "Customer portal is not
     * enabled" and no customers are synced.
     */
    AUTH_PAYMENTS_ORGANIZATION: z.string().trim().min(1).optional(),
    /** Checkout slugs of GET /api/auth/checkout/{slug}: a JSON object `{"pro": "<product uuid>", ...}`. */
    AUTH_CHECKOUT_PRODUCTS: z
      .string()
      .default('{}')
      .transform((v, ctx) => {
        try {
          const parsed: unknown = JSON.parse(v);
          if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && Object.values(parsed).every((p) => typeof p === 'string')) {
            return parsed as Record<string, string>;
          }
        } catch {
          // ignore: not JSON, reported below
        }
        ctx.addIssue({ code: 'custom', message: 'must be a JSON object of slug → product id' });
        return z.NEVER;
      }),
    /** Where the auth checkout sends the buyer after paying (default: PUBLIC_URL). */
    AUTH_CHECKOUT_SUCCESS_URL: url('checkout success URL').optional(),

    /**
     * Benefit integrations. GitHub repository benefits invite the customer's account as a collaborator
     * through the REST API with GITHUB_TOKEN (a GitHub App installation or fine-grained token with
     * administration write on the repositories); Discord benefits add the role through the bot
     * (DISCORD_BOT_TOKEN, the bot must be in the server with Manage Roles). Unset token: those grants
     * stay pending with an error. The API URLs are overridable for proxies and tests.
     */
    GITHUB_API_URL: url('GitHub REST API base URL').default('https://api.github.com'),
    GITHUB_TOKEN: z.string().min(1).optional(),
    DISCORD_API_URL: url('Discord REST API base URL').default('https://discord.com/api/v10'),
    DISCORD_BOT_TOKEN: z.string().min(1).optional(),
    /**
     * OAuth apps through which customers connect the GitHub / Discord account a benefit grant needs
     * (customer portal; callback `{PUBLIC_URL}/v1/customer-portal/oauth-accounts/callback`). Unset:
     * the portal offers no connect button for that platform. The OAuth URLs are overridable for tests.
     */
    GITHUB_BENEFITS_CLIENT_ID: z.string().min(1).optional(),
    GITHUB_BENEFITS_CLIENT_SECRET: z.string().min(1).optional(),
    GITHUB_OAUTH_URL: url('GitHub OAuth base URL').default('https://github.com'),
    DISCORD_BENEFITS_CLIENT_ID: z.string().min(1).optional(),
    DISCORD_BENEFITS_CLIENT_SECRET: z.string().min(1).optional(),
    DISCORD_OAUTH_URL: url('Discord OAuth authorize base URL').default('https://discord.com'),
    /** Lifetime of the links to a customer's downloadable files (the portal token, then the presigned object URL). */
    DOWNLOADABLE_URL_TTL_SECONDS: z.coerce.number().int().min(5).max(7 * 24 * 3600).default(3600),

    /** Lifetime of a checkout session: it expires (status `expired`, 404 by client secret) this long after creation. */
    CHECKOUT_TTL_SECONDS: z.coerce.number().int().min(1).max(30 * 24 * 3600).default(3600),
    /** How long a charge whose confirmation never recorded its outcome waits before it is settled (refunded). */
    CHECKOUT_CHARGE_SETTLE_SECONDS: z.coerce.number().int().min(1).max(24 * 3600).default(600),

    /** Serve the built admin and portal UIs from the API process. */
    SERVE_UI: bool.default(true),

    /** OAuth2 provider (docs/oauth2.md): lifetimes of access and refresh tokens. */
    OAUTH2_ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(7 * 24 * 3600).default(3600),
    OAUTH2_REFRESH_TOKEN_TTL_SECONDS: z.coerce.number().int().min(300).max(365 * 24 * 3600).default(30 * 24 * 3600),
    /** Id-token signing keys older than this are replaced by a new one (the old key stays in the JWKS one more period). */
    OAUTH2_SIGNING_KEY_MAX_AGE_DAYS: z.coerce.number().int().min(1).max(3650).default(90),

    /**
     * Origins (besides PUBLIC_URL's) that auth redirects (callbackURL, redirectTo, …) and the Origin
     * header of cookie-bearing auth POSTs may name: comma-separated, `https://app.example.com` or a
     * host pattern such as `https://*.example.com`.
     */
    TRUSTED_ORIGINS: z
      .string()
      .default('')
      .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
      .refine((list) => list.every((o) => URL.canParse(o.replace('*.', 'wildcard.'))), {
        message: 'must be a comma-separated list of origins (https://app.example.com)',
      }),
    /**
     * Proxies trusted to report the client's address and protocol (X-Forwarded-For / -Proto), Express's
     * `trust proxy`: unset or `false` = none (the socket's peer is the client), `true` = every hop, a
     * number = that many hops, or a comma-separated list of addresses / CIDRs / `loopback`,
     * `linklocal`, `uniquelocal`. Trusting a proxy that is not there lets any client pick its address
     * (and its sign-in rate-limit bucket).
     */
    TRUST_PROXY: z
      .string()
      .default('false')
      .transform((v): boolean | number | string[] => {
        const t = v.trim().toLowerCase();
        if (t === 'false' || t === 'no' || t === '0') return false;
        if (t === 'true' || t === 'yes') return true;
        if (/^\d+$/.test(t)) return Number(t);
        return t.split(',').map((s) => s.trim()).filter(Boolean);
      }),
    /**
     * Rate limiting of the auth service's sign-in, sign-up, password and email routes (3 per 10 s per
     * IP and path, shared through PostgreSQL). Unset means on, except under NODE_ENV=test.
     */
    RATE_LIMIT_ENABLED: bool.optional(),
    /** /v1 requests per minute per organization, customer or user (kit/rate-limits.ts). */
    API_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(500),
    /** /v1 requests per minute per client address without credentials (public checkout, license keys). */
    API_RATE_LIMIT_ANONYMOUS_PER_MINUTE: z.coerce.number().int().min(1).default(600),
    /** Sign-in refuses unverified emails (403, the verification mail is sent again); sign-up does not sign in. */
    REQUIRE_EMAIL_VERIFICATION: bool.default(false),
    /** Account deletion is confirmed through a mailed link (GET /api/auth/delete-user/callback). */
    DELETE_USER_VERIFICATION: bool.default(false),
    /** Users who hold every admin-plugin permission whatever their role (comma-separated user ids). */
    ADMIN_USER_IDS: z
      .string()
      .default('')
      .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean)),
    /**
     * Who may create organizations through /api/auth/organization/create: `all`, `none`, `admins`
     * (admin role or ADMIN_USER_IDS) or `verified` (users whose email is verified).
     */
    ORGANIZATION_CREATION: z.enum(['all', 'none', 'admins', 'verified']).default('all'),
    /** Organizations a user may belong to before creating another is refused; unset: no cap. */
    ORGANIZATION_LIMIT: z.coerce.number().int().min(0).optional(),
    /** Per-role caps replacing ORGANIZATION_LIMIT for users holding that admin-plugin role: JSON `{"admin": 50}`. */
    ORGANIZATION_LIMIT_BY_ROLE: z
      .string()
      .default('{}')
      .transform((v, ctx) => {
        try {
          const parsed = z.record(z.string(), z.number().int().min(0)).parse(JSON.parse(v));
          return parsed;
        } catch {
          ctx.addIssue({ code: 'custom', message: 'must be a JSON object of role to non-negative integer' });
          return z.NEVER;
        }
      }),
    ...socialCredentialVariables,
    /**
     * Social provider endpoints replacing the built-in ones (a provider speaking the same protocol
     * elsewhere, e.g. a local OpenID provider in tests): JSON `{"google": {"authorization": "…",
     * "token": "…", "userinfo": "…", "jwks": "…", "issuer": "…"}}`.
     */
    SOCIAL_PROVIDER_ENDPOINTS: z
      .string()
      .default('{}')
      .transform((v, ctx) => {
        try {
          return JSON.parse(v) as unknown;
        } catch {
          ctx.addIssue({ code: 'custom', message: 'must be JSON' });
          return z.NEVER;
        }
      })
      .pipe(z.partialRecord(z.enum(SOCIAL_PROVIDER_IDS), socialEndpoint)),
    /** Providers whose accounts link to an existing user with the same e-mail even when it is unverified there. */
    SOCIAL_TRUSTED_PROVIDERS: z
      .string()
      .default('')
      .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
      .pipe(z.array(z.enum(SOCIAL_PROVIDER_IDS))),
    /** unlink-account may remove a user's last account (they could no longer sign in). */
    SOCIAL_ALLOW_UNLINKING_ALL: bool.default(false),
    /** Social sign-in creates new users only when the request asks for it (`requestSignUp`). */
    SOCIAL_DISABLE_IMPLICIT_SIGN_UP: bool.default(false),
    /** Bearer token for GET /metrics (API and worker); unset: only loopback clients may scrape (docs/operations.md). */
    METRICS_TOKEN: z.string().min(16, { message: 'must be at least 16 characters' }).optional(),
    /** Port of the worker's Prometheus listener (GET /metrics); unset: the worker exposes no metrics. */
    WORKER_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
    /** SIGTERM/SIGINT: how long the API drains requests in flight and the worker lets running activities finish before exiting. */
    SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).max(3600).default(25),
  })
  .superRefine((c, ctx) => {
    if (c.PAYMENT_PROCESSOR === 'stripe' && !c.STRIPE_SECRET_KEY) {
      ctx.addIssue({ code: 'custom', path: ['STRIPE_SECRET_KEY'], message: 'is required when PAYMENT_PROCESSOR=stripe' });
    }
    if (c.NODE_ENV === 'production' && c.SECRET === DEV_SECRET) {
      ctx.addIssue({ code: 'custom', path: ['SECRET'], message: 'must be set in production' });
    }
  });

export type Config = z.infer<typeof configSchema>;

export const webhookAllowsPrivateUrls = (c: Pick<Config, 'NODE_ENV' | 'WEBHOOK_ALLOW_PRIVATE_URLS'>) =>
  c.WEBHOOK_ALLOW_PRIVATE_URLS ?? c.NODE_ENV !== 'production';

export class ConfigError extends Error {
  constructor(public readonly problems: { variable: string; message: string }[]) {
    super(
      'Invalid configuration:\n' + problems.map((p) => `  ${p.variable}: ${p.message}`).join('\n'),
    );
    this.name = 'ConfigError';
  }
}

/** Parse the environment; throws ConfigError naming every bad variable. Empty strings count as unset. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const input: Record<string, string> = {};
  for (const key of Object.keys(configSchema.shape)) {
    const v = env[key];
    if (v !== undefined && v !== '') input[key] = v;
  }
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => ({ variable: String(i.path[0] ?? '?'), message: i.message })),
    );
  }
  return parsed.data;
}

/** Names of every configuration variable, for docs and the docker-compose check. */
export const CONFIG_VARIABLES = Object.keys(configSchema.shape);

let cached: Config | undefined;
/** The process-wide configuration, parsed once. */
export function config(): Config {
  cached ??= loadConfig();
  return cached;
}
