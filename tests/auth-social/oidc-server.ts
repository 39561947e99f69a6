/**
 * A real OpenID provider for the social sign-in tests: `oidc-provider` (the certified Node
 * implementation) in this process on a random port, PKCE (S256) required, refresh tokens issued, and a
 * login step that signs in whichever test account `nextLogin` names (the user "types" their password).
 * Its signing key is ours, so tests can also mint id tokens the way Google One Tap hands them out.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import Provider from 'oidc-provider';

export interface TestAccount {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
  picture?: string;
}

export interface OidcServer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The account the next authorization request signs in. */
  nextLogin: { account: TestAccount | null };
  /** Endpoints in the shape of SOCIAL_PROVIDER_ENDPOINTS. */
  endpoints: { authorization: string; token: string; userinfo: string; jwks: string; issuer: string };
  /** An id token signed with the provider's key (as Google One Tap would return). */
  mintIdToken(claims: Record<string, unknown>, opts?: { audience?: string; issuer?: string }): Promise<string>;
  close(): Promise<void>;
}

export async function startOidcServer(redirectUris: string[]): Promise<OidcServer> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const accounts = new Map<string, TestAccount>();
  const nextLogin: { account: TestAccount | null } = { account: null };
  const clientId = 'emporia-test';
  const clientSecret = 'emporia-test-secret-0123456789abcdef';

  const server: Server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    scopes: ['openid', 'email', 'profile', 'offline_access'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'picture'] },
    conformIdTokenClaims: false,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    findAccount: async (_ctx, sub) => {
      const a = accounts.get(sub);
      if (!a) return undefined;
      return { accountId: sub, claims: async () => ({ ...a }) };
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['oidc-test-cookie-key-0123456789'] },
    ttl: { AccessToken: 3600, AuthorizationCode: 60, IdToken: 3600, RefreshToken: 86400, Interaction: 600, Session: 600, Grant: 600 },
  });
  provider.proxy = false;

  const callback = provider.callback();
  server.on('request', (req, res) => {
    const m = /^\/interaction\/([^/?]+)/.exec(req.url ?? '');
    if (!m) return callback(req, res);
    void (async () => {
      try {
        const details = await provider.interactionDetails(req, res);
        const account = nextLogin.account;
        if (!account) {
          await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user cancelled' });
          return;
        }
        accounts.set(account.sub, account);
        const grant = new provider.Grant({ accountId: account.sub, clientId: String(details.params.client_id) });
        grant.addOIDCScope(String(details.params.scope));
        const grantId = await grant.save();
        await provider.interactionFinished(req, res, { login: { accountId: account.sub }, consent: { grantId } }, { mergeWithLastSubmission: false });
      } catch (err) {
        res.statusCode = 500;
        res.end(String(err));
      }
    })();
  });

  return {
    issuer,
    clientId,
    clientSecret,
    nextLogin,
    endpoints: {
      authorization: `${issuer}/auth`,
      token: `${issuer}/token`,
      userinfo: `${issuer}/me`,
      jwks: `${issuer}/jwks`,
      issuer,
    },
    async mintIdToken(claims, opts = {}) {
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'test-key' })
        .setIssuer(opts.issuer ?? issuer)
        .setAudience(opts.audience ?? clientId)
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(privateKey);
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
