/** The parts of oidc-provider (which ships no types) the social sign-in tests use. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Client {
    grantTypeAllowed(type: string): boolean;
  }
  interface Interaction {
    uid: string;
    params: Record<string, unknown>;
  }
  interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }
  class Grant {
    constructor(init: { accountId: string; clientId: string });
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  export default class Provider {
    constructor(
      issuer: string,
      configuration: Record<string, unknown> & {
        issueRefreshToken?: (ctx: unknown, client: Client) => Promise<boolean>;
        findAccount?: (ctx: unknown, sub: string) => Promise<Account | undefined>;
        interactions?: { url: (ctx: unknown, interaction: Interaction) => string };
      },
    );
    proxy: boolean;
    Grant: typeof Grant;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      opts?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
  }
}
