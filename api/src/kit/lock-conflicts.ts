/**
 * Deadlocks (SQLSTATE 40P01) and serialization failures (40001) made visible. PostgreSQL's error names
 * no statement, so every pooled connection's `query` (mikro-orm.config.ts) puts the statement that
 * failed with one of these on the error, as `statement`: its first 200 characters with every quoted
 * literal replaced by `'…'` (MikroORM writes values into the SQL text; emails or secrets stay out of
 * logs). MikroORM's DriverException copies it from the driver's error. The API's error handler and
 * the worker's activity interceptor log such an error at warn with it (`lockConflict`).
 */

export const LOCK_CONFLICTS: Record<string, string> = {
  '40P01': 'deadlock detected',
  '40001': 'serialization failure',
};

/** The statement as logged: literals blanked, at most 200 characters. */
export function loggedStatement(sql: string): string {
  return sql
    .replace(/'(?:[^']|'')*'/g, "'…'")
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
}

interface QueryClient {
  query: (...args: any[]) => unknown;
}

/** Wraps the client's promise-returning `query` so a deadlock or serialization failure carries its statement. */
export function annotateLockConflicts(client: QueryClient): void {
  const query = client.query.bind(client);
  client.query = (...args: any[]) => {
    const out = query(...args);
    if (!out || typeof (out as Promise<unknown>).then !== 'function') return out;
    const first = args[0] as string | { text?: unknown } | undefined;
    const sql = typeof first === 'string' ? first : typeof first?.text === 'string' ? first.text : null;
    return (out as Promise<unknown>).catch((err: unknown) => {
      const e = err as { code?: unknown } | null;
      if (sql && e && typeof e === 'object' && typeof e.code === 'string' && e.code in LOCK_CONFLICTS) {
        Object.defineProperty(e, 'statement', { value: loggedStatement(sql), enumerable: false, configurable: true, writable: true });
      }
      throw err;
    });
  };
}

export interface LockConflict {
  sqlState: string;
  /** `deadlock detected` or `serialization failure`. */
  message: string;
  statement: string | null;
}

/** The deadlock or serialization failure in `err` (or its causes), if it is one. */
export function lockConflict(err: unknown): LockConflict | null {
  const seen: unknown[] = [err];
  for (let i = 0; i < seen.length && i < 10; i++) {
    const e = seen[i] as { code?: unknown; statement?: unknown; cause?: unknown; previous?: unknown; errors?: unknown } | null;
    if (!e || typeof e !== 'object') continue;
    if (typeof e.code === 'string' && e.code in LOCK_CONFLICTS) {
      return { sqlState: e.code, message: LOCK_CONFLICTS[e.code]!, statement: typeof e.statement === 'string' ? e.statement : null };
    }
    seen.push(e.cause, e.previous, ...(Array.isArray(e.errors) ? e.errors : []));
  }
  return null;
}
