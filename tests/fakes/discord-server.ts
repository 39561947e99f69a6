/**
 * A local HTTP server that speaks the part of Discord's REST API (v10) the Discord benefit uses: user
 * lookup (`GET /users/{id}`) and guild member roles (`PUT` / `DELETE
 * /guilds/{guild}/members/{user}/roles/{role}` → 204). `Authorization: Bot <token>` required (401
 * otherwise); unknown guild, member or role are 404 with Discord's JSON error codes (10004 Unknown
 * Guild, 10007 Unknown Member, 10011 Unknown Role). `failNext(n, status)` makes the next n requests
 * fail (e.g. one 500) to exercise retries.
 * Also an OAuth app, as discord.com serves it: `GET|POST /oauth2/authorize` (at `oauthUrl`: sign in by
 * username and authorize), `POST /api/v10/oauth2/token` (form-encoded, `grant_type=authorization_code`)
 * and `GET /api/v10/users/@me` with the user's Bearer token.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { authorizePage, createOAuthApp, exchangeCode, parseBody, type OAuthApp } from './oauth-app.ts';

export interface FakeDiscord {
  url: string;
  /** Where the OAuth authorize page lives (discord.com's place). */
  oauthUrl: string;
  token: string;
  requests: { method: string; path: string }[];
  /** The OAuth app customers connect their account through. */
  oauth: OAuthApp;
  addUser(id: string, username: string): void;
  addGuild(guildId: string, roleIds: string[], memberIds: string[]): void;
  /** Role ids a member holds in a guild. */
  roles(guildId: string, userId: string): string[];
  /** The next `count` requests (of `method` only, if given) fail with `status`. */
  failNext(count: number, status?: number, method?: string): void;
  close(): Promise<void>;
}

export async function startFakeDiscord(): Promise<FakeDiscord> {
  const token = `fake-bot-${Math.random().toString(36).slice(2)}`;
  const users = new Map<string, string>();
  const guilds = new Map<string, { roles: Set<string>; members: Map<string, Set<string>> }>();
  const requests: FakeDiscord['requests'] = [];
  let failures: { count: number; status: number; method?: string } = { count: 0, status: 500 };
  const oauth = createOAuthApp('discord');

  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://x');
      const path = url.pathname.replace(/^\/api\/v10/, '');
      const body = parseBody(raw, req.headers['content-type']);
      requests.push({ method: req.method!, path });
      const send = (status: number, data?: unknown) => {
        res.writeHead(status, data === undefined ? {} : { 'content-type': 'application/json' });
        res.end(data === undefined ? undefined : JSON.stringify(data));
      };
      const unknown = (what: string, code: number) => send(404, { message: `Unknown ${what}`, code });
      if (url.pathname === '/oauth2/authorize') {
        const findUser = (n: string) => [...users].find(([, name]) => name.toLowerCase() === n.toLowerCase())?.[0] ?? null;
        return authorizePage(oauth, { service: 'Discord', userLabel: 'Username', findUser }, req, { ...Object.fromEntries(url.searchParams), ...body }, res);
      }
      if (path === '/oauth2/token' && req.method === 'POST') {
        if (body.grant_type !== 'authorization_code') return send(400, { error: 'unsupported_grant_type' });
        const r = exchangeCode(oauth, body, 'dsc_');
        if (!r.ok) return send(r.error === 'invalid_client' ? 401 : 400, { error: r.error });
        return send(200, { access_token: r.token, token_type: 'Bearer', expires_in: 604800, refresh_token: `r_${r.token}`, scope: 'identify' });
      }
      const bearer = /^Bearer (dsc_\w+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (bearer) {
        const id = oauth.tokens.get(bearer);
        if (!id) return send(401, { message: '401: Unauthorized', code: 0 });
        const name = users.get(id)!;
        return req.method === 'GET' && path === '/users/@me' ? send(200, { id, username: name, discriminator: '0', global_name: name }) : send(404, { message: '404: Not Found', code: 0 });
      }
      if (req.headers.authorization !== `Bot ${token}`) return send(401, { message: '401: Unauthorized', code: 0 });
      if (failures.count > 0 && (!failures.method || failures.method === req.method)) {
        failures.count--;
        return send(failures.status, { message: 'Internal Server Error', code: 0 });
      }
      const parts = path.split('/').filter(Boolean);
      if (req.method === 'GET' && parts[0] === 'users' && parts.length === 2) {
        const name = users.get(parts[1]!);
        return name ? send(200, { id: parts[1], username: name, discriminator: '0', global_name: name }) : unknown('User', 10013);
      }
      if (parts[0] === 'guilds' && parts[2] === 'members' && parts[4] === 'roles' && parts.length === 6) {
        const [, guildId, , userId, , roleId] = parts as [string, string, string, string, string, string];
        const guild = guilds.get(guildId);
        if (!guild) return unknown('Guild', 10004);
        const member = guild.members.get(userId);
        if (!member) return unknown('Member', 10007);
        if (!guild.roles.has(roleId)) return unknown('Role', 10011);
        if (req.method === 'PUT') {
          member.add(roleId);
          return send(204);
        }
        if (req.method === 'DELETE') {
          member.delete(roleId);
          return send(204);
        }
      }
      return send(404, { message: '404: Not Found', code: 0 });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v10`,
    oauthUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    oauth,
    requests,
    addUser(id, username) {
      users.set(id, username);
    },
    addGuild(guildId, roleIds, memberIds) {
      guilds.set(guildId, { roles: new Set(roleIds), members: new Map(memberIds.map((m) => [m, new Set<string>()])) });
    },
    roles: (guildId, userId) => [...(guilds.get(guildId)?.members.get(userId) ?? [])],
    failNext(count, status = 500, method) {
      failures = { count, status, method };
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
