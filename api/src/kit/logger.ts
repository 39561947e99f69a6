/** Structured JSON logs (pino). */
import { destination, pino, type Logger } from 'pino';
import type { Config } from '../config.ts';

export type { Logger };

/** Bytes of log lines gathered before they are written (in production). */
const LOG_BATCH_BYTES = 4096;
/** The longest a logged line waits in memory before it is written (in production). */
export const LOG_FLUSH_MS = 100;

/**
 * In production lines are written to stdout asynchronously and in batches: a write starts once 4 KiB
 * of lines are waiting (about 20 request lines) or when a line has waited 100 ms, so a busy API makes
 * one write per batch instead of one per request (that write was a tenth of a read's CPU), and a
 * request never waits for a write. pino flushes what is left when the process exits (`process.exit`,
 * an uncaught exception); only a process killed outright (SIGKILL) loses the lines of its last 100 ms.
 * Elsewhere each line is written synchronously as it is logged.
 */
export function createLogger(cfg: Pick<Config, 'LOG_LEVEL'> & Partial<Pick<Config, 'NODE_ENV'>>, name: string): Logger {
  const options = { name, level: cfg.LOG_LEVEL, base: { service: name } };
  if (cfg.NODE_ENV !== 'production') return pino(options);
  return pino(options, destination({ dest: 1, sync: false, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS }));
}
