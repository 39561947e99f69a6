/**
 * `Idempotency-Key` on `POST /v1/*`, with Stripe's semantics: the first request with a key runs and its
 * answer (status and JSON body) is kept for 24 h; a later request with the same key and the same
 * method, path and body gets that answer again (`Idempotent-Replayed: true`) without running; the same
 * key with a different request is a 422; while the first one still runs, 409. Keys belong to the
 * caller (its token or session cookie, else its address), so two callers never share one. A 5xx is not
 * kept: the key is released and a retry runs again (writes are transactional, so nothing of the
 * failed attempt remains). A first request that never answered frees its key after a minute.
 */
import { createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Deps } from '../../deps.ts';
import { ApiError, fieldError } from '../../kit/errors.ts';

export const IDEMPOTENCY_TTL_HOURS = 24;
const ABANDONED_SECONDS = 60;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

function callerScope(req: Request): string {
  const auth = req.headers.authorization;
  if (auth) return sha256(`authorization:${auth}`);
  const session = /(?:^|;\s*)((?:__Secure-)?[\w.-]*session_token)=([^;]+)/.exec(req.headers.cookie ?? '');
  if (session) return sha256(`cookie:${session[2]}`);
  return sha256(`address:${req.ip ?? ''}`);
}

interface Row {
  fingerprint: string;
  status: number | null;
  body: unknown;
  abandoned: boolean;
}

export function idempotencyKeys(deps: Pick<Deps, 'orm' | 'log'>): RequestHandler {
  const db = () => deps.orm.em.getConnection();
  const claim = async (scope: string, key: string, fingerprint: string): Promise<boolean> => {
    const rows = await db().execute<{ key: string }[]>(
      `insert into idempotency_keys (scope, key, fingerprint, status, body, created_at) values (?, ?, ?, null, null, now())
       on conflict (scope, key) do update set fingerprint = excluded.fingerprint, status = null, body = null, created_at = now()
         where idempotency_keys.created_at < now() - make_interval(hours => ?)
            or (idempotency_keys.status is null and idempotency_keys.created_at < now() - make_interval(secs => ?))
       returning key`,
      [scope, key, fingerprint, IDEMPOTENCY_TTL_HOURS, ABANDONED_SECONDS],
    );
    return rows.length === 1;
  };

  return (req: Request, res: Response, next: NextFunction) => {
    const key = req.get('idempotency-key');
    if (req.method !== 'POST' || key === undefined) return next();
    if (!KEY_PATTERN.test(key)) {
      return next(fieldError(['header', 'idempotency-key'], 'Idempotency-Key must be 1 to 255 visible ASCII characters.'));
    }
    const scope = callerScope(req);
    const raw = (req as unknown as { rawBody?: Buffer }).rawBody ?? Buffer.alloc(0);
    const fingerprint = sha256(Buffer.concat([Buffer.from(`${req.method} ${req.originalUrl}\n`), raw]));

    (async () => {
      if (await claim(scope, key, fingerprint)) {
        record(req, res, scope, key);
        return next();
      }
      const [row] = await db().execute<Row[]>(
        `select fingerprint, status, body, status is null and created_at < now() - make_interval(secs => ?) as abandoned
           from idempotency_keys where scope = ? and key = ?`,
        [ABANDONED_SECONDS, scope, key],
      );
      if (!row) return next(new ApiError(409, 'IdempotencyKeyInUse', 'A request with this Idempotency-Key is in progress; retry it later.'));
      if (row.fingerprint !== fingerprint) {
        return next(
          fieldError(
            ['header', 'idempotency-key'],
            'This Idempotency-Key was used with a different request (method, path or body) in the last 24 hours.',
          ),
        );
      }
      if (row.status === null) {
        res.setHeader('Retry-After', '1');
        return next(new ApiError(409, 'IdempotencyKeyInUse', 'A request with this Idempotency-Key is in progress; retry it later.'));
      }
      res.setHeader('Idempotent-Replayed', 'true');
      if (row.body === null) res.status(row.status).end();
      else res.status(row.status).json(row.body);
    })().catch(next);

    /** Keeps the answer before it is sent, so a retry right after it is a replay, never a 409. */
    function record(req: Request, res: Response, scope: string, key: string) {
      let body: unknown = null;
      const json = res.json.bind(res);
      res.json = (b: unknown) => {
        body = b;
        return json(b);
      };
      const end = res.end.bind(res) as (...args: unknown[]) => Response;
      let kept = false;
      res.end = ((...args: unknown[]) => {
        if (kept) return end(...args);
        kept = true;
        const status = res.statusCode;
        const write =
          status >= 500
            ? db().execute('delete from idempotency_keys where scope = ? and key = ?', [scope, key])
            : db().execute('update idempotency_keys set status = ?, body = ? where scope = ? and key = ?', [
                status,
                body === null ? null : JSON.stringify(body),
                scope,
                key,
              ]);
        write
          .catch((err: unknown) => deps.log.error({ err, requestId: req.id }, 'idempotency key not recorded'))
          .finally(() => end(...args));
        if (Math.random() < 0.01) {
          db()
            .execute('delete from idempotency_keys where created_at < now() - make_interval(hours => ?)', [IDEMPOTENCY_TTL_HOURS])
            .catch((err: unknown) => deps.log.warn({ err }, 'expired idempotency keys not deleted'));
        }
        return res;
      }) as Response['end'];
    }
  };
}
