/**
 * A local HTTP server that speaks the part of GitHub's REST API the repository benefit uses: user
 * lookup (`GET /users/{login}`, `GET /user/{id}`), collaborator invitations
 * (`PUT /repos/{owner}/{repo}/collaborators/{username}` → 201 with the invitation, 204 when already a
 * collaborator), invitation listing / cancellation and collaborator removal. Bearer token required
 * (401 otherwise); unknown repositories and users are 404, a bad permission 422, as GitHub answers.
 * `failNext(n, status)` makes the next n requests fail (e.g. one 502) to exercise retries.
 * Also an OAuth app, as github.com serves it: `GET|POST /login/oauth/authorize` (sign in by login and
 * authorize), `POST /login/oauth/access_token` (form or JSON; GitHub answers errors with 200 and an
 * `error` field), and `GET /user` with the user's token.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { authorizePage, createOAuthApp, exchangeCode, parseBody, type OAuthApp } from './oauth-app.ts';

export interface FakeGitHub {
  url: string;
  token: string;
  /** Every request received: method, path, JSON body. */
  requests: { method: string; path: string; body: unknown }[];
  addUser(login: string): { id: number; login: string };
  addRepository(owner: string, name: string): void;
  /** Logins invited (pending) or collaborating, by `owner/repo`. */
  invitations(owner: string, name: string): { id: number; login: string; permission: string }[];
  collaborators(owner: string, name: string): string[];
  /** The invitee accepts: the invitation turns into a collaborator. */
  accept(owner: string, name: string, login: string): void;
  /** The next `count` requests (of `method` only, if given) fail with `status`. */
  failNext(count: number, status?: number, method?: string): void;
  /** The OAuth app customers connect their account through. */
  oauth: OAuthApp;
  close(): Promise<void>;
}

export async function startFakeGitHub(): Promise<FakeGitHub> {
  const token = `ghs_fake${Math.random().toString(36).slice(2)}`;
  const users = new Map<string, { id: number; login: string }>();
  const repos = new Map<string, { invitations: { id: number; login: string; permission: string }[]; collaborators: Set<string> }>();
  const requests: FakeGitHub['requests'] = [];
  let nextId = 1000;
  let failures: { count: number; status: number; method?: string } = { count: 0, status: 502 };
  const oauth = createOAuthApp('github');

  const userByLogin = (login: string) => users.get(login.toLowerCase());
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://x');
      const body: Record<string, unknown> | null = raw ? parseBody(raw, req.headers['content-type']) : null;
      requests.push({ method: req.method!, path: url.pathname, body });
      const send = (status: number, data?: unknown) => {
        res.writeHead(status, data === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' });
        res.end(data === undefined ? undefined : JSON.stringify(data));
      };
      const notFound = () => send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
      if (url.pathname === '/login/oauth/authorize') {
        const params = { ...Object.fromEntries(url.searchParams), ...((body ?? {}) as Record<string, string>) };
        return authorizePage(oauth, { service: 'GitHub', userLabel: 'Username', findUser: (n) => userByLogin(n)?.login ?? null }, req, params, res);
      }
      if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') {
        const r = exchangeCode(oauth, (body ?? {}) as Record<string, string>, 'gho_');
        if (!r.ok) return send(200, { error: r.error === 'invalid_client' ? 'incorrect_client_credentials' : 'bad_verification_code' });
        return send(200, { access_token: r.token, token_type: 'bearer', scope: 'read:user' });
      }
      const userToken = /^(?:Bearer|token) (gho_\w+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (userToken) {
        const login = oauth.tokens.get(userToken);
        if (!login) return send(401, { message: 'Bad credentials' });
        const u = userByLogin(login)!;
        return req.method === 'GET' && url.pathname === '/user' ? send(200, { login: u.login, id: u.id, type: 'User' }) : notFound();
      }
      if (req.headers.authorization !== `Bearer ${token}`) return send(401, { message: 'Bad credentials' });
      if (failures.count > 0 && (!failures.method || failures.method === req.method)) {
        failures.count--;
        return send(failures.status, { message: 'Server Error' });
      }
      const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
      if (req.method === 'GET' && parts[0] === 'users' && parts.length === 2) {
        const u = userByLogin(parts[1]!);
        return u ? send(200, { login: u.login, id: u.id, type: 'User' }) : notFound();
      }
      if (req.method === 'GET' && parts[0] === 'user' && parts.length === 2) {
        const u = [...users.values()].find((x) => String(x.id) === parts[1]);
        return u ? send(200, { login: u.login, id: u.id, type: 'User' }) : notFound();
      }
      if (parts[0] !== 'repos' || parts.length < 4) return notFound();
      const repo = repos.get(`${parts[1]}/${parts[2]}`.toLowerCase());
      if (!repo) return notFound();
      const [, , , kind, target] = parts;
      if (kind === 'collaborators' && target && parts.length === 5) {
        const u = userByLogin(target);
        if (!u) return notFound();
        if (req.method === 'PUT') {
          const permission = (body?.permission as string | undefined) ?? 'push';
          if (!['pull', 'triage', 'push', 'maintain', 'admin'].includes(permission)) {
            return send(422, { message: 'Validation Failed', errors: [{ field: 'permission', code: 'invalid' }] });
          }
          if (repo.collaborators.has(u.login)) return send(204);
          const existing = repo.invitations.find((i) => i.login === u.login);
          if (existing) existing.permission = permission;
          const inv = existing ?? { id: nextId++, login: u.login, permission };
          if (!existing) repo.invitations.push(inv);
          return send(201, {
            id: inv.id,
            repository: { full_name: `${parts[1]}/${parts[2]}` },
            invitee: { login: u.login, id: u.id },
            permissions: permission === 'push' ? 'write' : permission === 'pull' ? 'read' : permission,
          });
        }
        if (req.method === 'DELETE') {
          repo.collaborators.delete(u.login);
          return send(204);
        }
      }
      if (kind === 'invitations' && req.method === 'GET' && parts.length === 4) {
        return send(
          200,
          repo.invitations.map((i) => {
            const u = userByLogin(i.login)!;
            return { id: i.id, invitee: { login: u.login, id: u.id }, permissions: i.permission };
          }),
        );
      }
      if (kind === 'invitations' && req.method === 'DELETE' && target) {
        const before = repo.invitations.length;
        repo.invitations = repo.invitations.filter((i) => String(i.id) !== target);
        return before === repo.invitations.length ? notFound() : send(204);
      }
      return notFound();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    requests,
    addUser(login) {
      const u = { id: 5_000_000 + users.size + 1, login };
      users.set(login.toLowerCase(), u);
      return u;
    },
    addRepository(owner, name) {
      repos.set(`${owner}/${name}`.toLowerCase(), { invitations: [], collaborators: new Set() });
    },
    invitations: (owner, name) => [...(repos.get(`${owner}/${name}`.toLowerCase())?.invitations ?? [])],
    collaborators: (owner, name) => [...(repos.get(`${owner}/${name}`.toLowerCase())?.collaborators ?? [])],
    accept(owner, name, login) {
      const repo = repos.get(`${owner}/${name}`.toLowerCase())!;
      repo.invitations = repo.invitations.filter((i) => i.login !== login);
      repo.collaborators.add(login);
    },
    failNext(count, status = 502, method) {
      failures = { count, status, method };
    },
    oauth,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
