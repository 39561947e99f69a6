/** Structured JSON logs (pino). */
import { pino, type Logger } from 'pino';
import type { Config } from '../config.ts';

export type { Logger };

export function createLogger(cfg: Pick<Config, 'LOG_LEVEL'>, name: string): Logger {
  return pino({ name, level: cfg.LOG_LEVEL, base: { service: name } });
}
