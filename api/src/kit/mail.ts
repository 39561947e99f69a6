/** Outgoing mail over SMTP (nodemailer), through a small pool of kept-open connections. */
import nodemailer from 'nodemailer';
import type { Config } from '../config.ts';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<{ messageId: string }>;
  /** Lets the mails already handed over finish (up to `graceMs`), then closes the pooled connections. */
  close(graceMs?: number): Promise<void>;
}

/** SMTP connections one process keeps open at most; further mails queue for a free one. */
export const MAIL_POOL_CONNECTIONS = 3;
/** Mails one pooled connection carries before it is replaced (bounds a server's per-session limits). */
const MAIL_POOL_MESSAGES = 100;
/** How long shutdown waits for mails already handed over before closing the pool. */
const CLOSE_GRACE_MS = 10_000;

/** `SMTP_URL` with the pool switched on (options given in the URL's query win). */
export function pooledSmtpUrl(smtpUrl: string): string {
  const url = new URL(smtpUrl);
  url.searchParams.set('pool', 'true');
  if (!url.searchParams.has('maxConnections')) url.searchParams.set('maxConnections', String(MAIL_POOL_CONNECTIONS));
  if (!url.searchParams.has('maxMessages')) url.searchParams.set('maxMessages', String(MAIL_POOL_MESSAGES));
  return url.toString();
}

export function createMailer(cfg: Pick<Config, 'SMTP_URL' | 'MAIL_FROM'>): Mailer {
  // One transport per process: a mail reuses an open SMTP session instead of a connect, greeting and
  // EHLO of its own; at most MAIL_POOL_CONNECTIONS sessions, so a burst queues instead of opening hundreds.
  const transport = nodemailer.createTransport(pooledSmtpUrl(cfg.SMTP_URL));
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;
  return {
    async send(mail) {
      // A closed pool would queue the mail forever: say so instead.
      if (closed) throw new Error('the mailer is closed (the process is shutting down)');
      const sending = transport.sendMail({ from: cfg.MAIL_FROM, ...mail });
      inFlight.add(sending);
      try {
        const info = await sending;
        return { messageId: info.messageId };
      } finally {
        inFlight.delete(sending);
      }
    },
    async close(graceMs = CLOSE_GRACE_MS) {
      closed = true;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...inFlight]),
        new Promise((r) => (timer = setTimeout(r, graceMs))),
      ]);
      clearTimeout(timer);
      transport.close();
    },
  };
}
