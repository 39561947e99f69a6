/** Structured JSON logs (pino). */
import { destination, pino, type Logger } from 'pino';
import type { Config } from '../config.ts';

export type { Logger };

/**
 * In production lines are written to stdout asynchronously (lines logged while a write is under way
 * go out together in the next one), so a request never waits for a write; pino flushes what is left
 * when the process exits. Elsewhere each line is written synchronously as it is logged.
 */
export function createLogger(cfg: Pick<Config, 'LOG_LEVEL'> & Partial<Pick<Config, 'NODE_ENV'>>, name: string): Logger {
  const options = { name, level: cfg.LOG_LEVEL, base: { service: name } };
  if (cfg.NODE_ENV !== 'production') return pino(options);
  return pino(options, destination({ dest: 1, sync: false }));
}
