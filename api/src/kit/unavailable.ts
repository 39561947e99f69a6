/**
 * Errors that mean "PostgreSQL cannot be reached right now" (restarting, refusing connections, a
 * connection cut mid-query): the request did not commit, and the same request later can succeed.
 * The API answers them 503 with Retry-After instead of 500.
 */
const CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', '57P01', '57P02', '57P03', '53300']);
const MESSAGES =
  /connection terminated|connection (?:was )?(?:closed|ended|refused)|server closed the connection|terminating connection due to administrator command|the database system is (?:shutting down|starting up|in recovery mode)|client has encountered a connection error|timeout exceeded when trying to connect|connect ECONNREFUSED/i;

export const RETRY_AFTER_SECONDS = 2;

export function isDatabaseUnavailable(err: unknown): boolean {
  let e = err as { name?: string; code?: unknown; message?: unknown; cause?: unknown; previous?: unknown } | undefined;
  for (let depth = 0; e && depth < 6; depth++) {
    if (e.name === 'ConnectionException') return true;
    const code = typeof e.code === 'string' ? e.code : '';
    if (CODES.has(code) || code.startsWith('08')) return true;
    if (typeof e.message === 'string' && MESSAGES.test(e.message)) return true;
    e = (e.cause ?? e.previous) as typeof e;
  }
  return false;
}
