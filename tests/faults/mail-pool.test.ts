/** Outgoing mail goes over a few kept-open SMTP sessions, and a burst of mails all arrives. */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../api/src/config.ts';
import { MAIL_POOL_CONNECTIONS, createMailer } from '../../api/src/kit/mail.ts';

/** A TCP relay in front of the mail catcher that counts the SMTP connections made through it. */
async function countingRelay(target: URL) {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    connections++;
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

const cfg = loadConfig();
const relay = await countingRelay(new URL(cfg.SMTP_URL.replace('localhost', '127.0.0.1')));
afterAll(() => relay.close());

async function arrived(tag: string, want: number, timeoutMs = 30_000): Promise<Set<string>> {
  const deadline = Date.now() + timeoutMs;
  let seen = new Set<string>();
  while (Date.now() < deadline) {
    const res = await fetch(`${cfg.MAIL_UI_URL.replace('localhost', '127.0.0.1')}/email`);
    const all = (await res.json()) as { subject: string; to: { address: string }[] }[];
    seen = new Set(all.filter((m) => m.subject.startsWith(`${tag} `)).map((m) => m.to[0]!.address));
    if (seen.size >= want) return seen;
    await new Promise((r) => setTimeout(r, 250));
  }
  return seen;
}

it('sends a burst of 60 mails over at most a few SMTP connections, and every one arrives', async () => {
  const mailer = createMailer({ SMTP_URL: relay.url, MAIL_FROM: cfg.MAIL_FROM });
  const tag = `pool-${randomUUID().slice(0, 8)}`;
  const recipients = Array.from({ length: 60 }, (_, i) => `${tag}-${i}@example.com`);
  const sent = await Promise.all(recipients.map((to, i) => mailer.send({ to, subject: `${tag} mail ${i}`, text: `mail ${i}` })));
  expect(new Set(sent.map((s) => s.messageId)).size).toBe(60);
  // One connection per mail was 60; the pool keeps a bounded few open and reuses them.
  expect(relay.connections()).toBeGreaterThan(0);
  expect(relay.connections()).toBeLessThanOrEqual(MAIL_POOL_CONNECTIONS);
  expect([...(await arrived(tag, 60))].sort()).toEqual([...recipients].sort());
  await mailer.close();
});

it('close() lets mails already handed over finish before the pool shuts', async () => {
  const mailer = createMailer({ SMTP_URL: relay.url, MAIL_FROM: cfg.MAIL_FROM });
  const tag = `close-${randomUUID().slice(0, 8)}`;
  const recipients = Array.from({ length: 10 }, (_, i) => `${tag}-${i}@example.com`);
  const sending = recipients.map((to, i) => mailer.send({ to, subject: `${tag} mail ${i}`, text: `mail ${i}` }));
  await mailer.close();
  const results = await Promise.allSettled(sending);
  expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
  expect((await arrived(tag, 10)).size).toBe(10);
  // A closed mailer sends nothing more.
  await expect(mailer.send({ to: `${tag}-late@example.com`, subject: `${tag} late`, text: 'late' })).rejects.toThrow();
});
