/** Outgoing mail over SMTP (nodemailer). */
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
  close(): void;
}

export function createMailer(cfg: Pick<Config, 'SMTP_URL' | 'MAIL_FROM'>): Mailer {
  const transport = nodemailer.createTransport(cfg.SMTP_URL);
  return {
    async send(mail) {
      const info = await transport.sendMail({ from: cfg.MAIL_FROM, ...mail });
      return { messageId: info.messageId };
    },
    close: () => transport.close(),
  };
}
