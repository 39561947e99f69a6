/**
 * Adapters for the benefits that act on third-party services, over their public REST APIs:
 * - GitHub: invite an account as a repository collaborator with a permission
 *   (`PUT /repos/{owner}/{repo}/collaborators/{username}`), revoke by cancelling a pending invitation
 *   and removing the collaborator (`DELETE`); look accounts up by login or id.
 * - Discord: add / remove a guild member's role through the bot
 *   (`PUT|DELETE /guilds/{guild}/members/{user}/roles/{role}`); look users up by id.
 * Failures are `IntegrationError`s: `retryable` for 5xx, 429 and network errors (the grant activity
 * lets Temporal retry them), permanent otherwise (recorded on the grant).
 */
import type { Config } from '../../config.ts';

export class IntegrationError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'IntegrationError';
  }
}

export interface ExternalAccount {
  /** The provider's stable user id (a number as a string). */
  id: string;
  username: string;
}

export interface GitHubAdapter {
  findAccount(idOrLogin: string): Promise<ExternalAccount | null>;
  addCollaborator(repo: { owner: string; name: string }, login: string, permission: string): Promise<{ invited: boolean }>;
  removeCollaborator(repo: { owner: string; name: string }, login: string): Promise<void>;
}

export interface DiscordAdapter {
  findAccount(userId: string): Promise<ExternalAccount | null>;
  addRole(guildId: string, userId: string, roleId: string): Promise<void>;
  removeRole(guildId: string, userId: string, roleId: string): Promise<void>;
}

export interface Integrations {
  github: GitHubAdapter;
  discord: DiscordAdapter;
}

type Fetcher = (path: string, init?: { method?: string; body?: unknown }) => Promise<{ status: number; body: unknown }>;

function client(service: string, base: string, headers: Record<string, string> | null): Fetcher {
  return async (path, init = {}) => {
    if (!headers) throw new IntegrationError(`${service} integration is not configured`, false);
    let res: Response;
    try {
      res = await fetch(`${base.replace(/\/$/, '')}${path}`, {
        method: init.method ?? 'GET',
        headers: { ...headers, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
        signal: AbortSignal.timeout(15_000),
      });
    } catch (err) {
      throw new IntegrationError(`${service} unreachable: ${(err as Error).message}`, true);
    }
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    return { status: res.status, body };
  };
}

function failure(service: string, what: string, res: { status: number; body: unknown }): IntegrationError {
  const detail = (res.body as { message?: string } | null)?.message ?? '';
  const retryable = res.status >= 500 || res.status === 429 || res.status === 408;
  return new IntegrationError(`${service} ${what} failed: ${res.status}${detail ? ` ${detail}` : ''}`, retryable, res.status);
}

const seg = encodeURIComponent;

export function createGitHubAdapter(cfg: Pick<Config, 'GITHUB_API_URL' | 'GITHUB_TOKEN'>): GitHubAdapter {
  const call = client(
    'GitHub',
    cfg.GITHUB_API_URL,
    cfg.GITHUB_TOKEN
      ? {
          authorization: `Bearer ${cfg.GITHUB_TOKEN}`,
          accept: 'application/vnd.github+json',
          'x-github-api-version': '2022-11-28',
          'user-agent': 'emporia',
        }
      : null,
  );
  return {
    async findAccount(idOrLogin) {
      const path = /^\d+$/.test(idOrLogin) ? `/user/${idOrLogin}` : `/users/${seg(idOrLogin)}`;
      const res = await call(path);
      if (res.status === 404) return null;
      if (res.status !== 200) throw failure('GitHub', 'user lookup', res);
      const u = res.body as { id: number; login: string };
      return { id: String(u.id), username: u.login };
    },
    async addCollaborator(repo, login, permission) {
      const res = await call(`/repos/${seg(repo.owner)}/${seg(repo.name)}/collaborators/${seg(login)}`, {
        method: 'PUT',
        body: { permission },
      });
      // 201: invitation created; 204: already a collaborator (or an organization member).
      if (res.status === 201 || res.status === 204) return { invited: res.status === 201 };
      throw failure('GitHub', 'collaborator invitation', res);
    },
    async removeCollaborator(repo, login) {
      const base = `/repos/${seg(repo.owner)}/${seg(repo.name)}`;
      // A pending invitation is cancelled; an accepted one made the account a collaborator.
      const list = await call(`${base}/invitations?per_page=100`);
      if (list.status === 404) return; // the repository is gone: nothing left to revoke
      if (list.status !== 200) throw failure('GitHub', 'invitation listing', list);
      for (const inv of (list.body as { id: number; invitee?: { login?: string } | null }[]) ?? []) {
        if (inv.invitee?.login?.toLowerCase() !== login.toLowerCase()) continue;
        const del = await call(`${base}/invitations/${inv.id}`, { method: 'DELETE' });
        if (del.status !== 204 && del.status !== 404) throw failure('GitHub', 'invitation removal', del);
      }
      const res = await call(`${base}/collaborators/${seg(login)}`, { method: 'DELETE' });
      if (res.status !== 204 && res.status !== 404) throw failure('GitHub', 'collaborator removal', res);
    },
  };
}

export function createDiscordAdapter(cfg: Pick<Config, 'DISCORD_API_URL' | 'DISCORD_BOT_TOKEN'>): DiscordAdapter {
  const call = client(
    'Discord',
    cfg.DISCORD_API_URL,
    cfg.DISCORD_BOT_TOKEN ? { authorization: `Bot ${cfg.DISCORD_BOT_TOKEN}`, 'user-agent': 'DiscordBot (emporia, 0.1)' } : null,
  );
  const rolePath = (g: string, u: string, r: string) => `/guilds/${seg(g)}/members/${seg(u)}/roles/${seg(r)}`;
  return {
    async findAccount(userId) {
      if (!/^\d{1,32}$/.test(userId)) return null;
      const res = await call(`/users/${userId}`);
      if (res.status === 404) return null;
      if (res.status !== 200) throw failure('Discord', 'user lookup', res);
      const u = res.body as { id: string; username: string };
      return { id: u.id, username: u.username };
    },
    async addRole(guildId, userId, roleId) {
      const res = await call(rolePath(guildId, userId, roleId), { method: 'PUT' });
      if (res.status !== 204) throw failure('Discord', 'role assignment', res);
    },
    async removeRole(guildId, userId, roleId) {
      const res = await call(rolePath(guildId, userId, roleId), { method: 'DELETE' });
      // 404: the member left the server (or the role is gone): nothing to remove.
      if (res.status !== 204 && res.status !== 404) throw failure('Discord', 'role removal', res);
    },
  };
}

export function createIntegrations(cfg: Config): Integrations {
  return { github: createGitHubAdapter(cfg), discord: createDiscordAdapter(cfg) };
}
