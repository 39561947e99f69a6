/** Starts the real API (ephemeral port) and a worker on its own task queue for one test file. */
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Worker } from '@temporalio/worker';
import { loadConfig } from '../api/src/config.ts';
import { createDeps, closeDeps, depsPools, type Deps } from '../api/src/deps.ts';
import { createdPools, lentConnections, traceConnectionCheckouts } from '../api/src/mikro-orm.config.ts';
import { createApp } from '../api/src/app.ts';
import { checkoutExpirySweeperWorkflowId, outboxDispatcherWorkflowId } from '../workflows/src/ids.ts';
import { cloneDatabase, dropDatabase } from '../infra/src/services.ts';
import { createWorker } from '../workers/src/worker.ts';
import { startOutboxListener, type OutboxListener } from '../workers/src/outbox-listener.ts';
import { startCheckoutExpirySweeper } from '../workers/src/checkout-expiry-sweeper.ts';

// Every connection checkout remembers its stack: a test file whose server, once closed, still lends a
// connection fails and names the code that took it.
traceConnectionCheckouts(true);

/** How long a closed server's background work (a batched mark, an auth bookkeeping write) may keep a connection. */
const LENT_GRACE_MS = 15_000;

/** The connections `deps`' pools still lend after `graceMs` (each with the stack that took it); empty when all came back. */
export async function connectionsStillLent(deps: Deps, graceMs = LENT_GRACE_MS): Promise<string[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const pools = await depsPools(deps);
    const lent = pools.flatMap((p) => lentConnections(p));
    if (!lent.length || Date.now() > deadline) return lent;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface TestServer {
  url: string;
  deps: Deps;
  /** The database this server uses (its own copy of the migrated template unless one was given). */
  databaseUrl: string;
  close(): Promise<void>;
}

/** A fresh database with every migration applied: a copy of the run's template. */
export async function createTestDatabase(): Promise<string> {
  const template = process.env.DATABASE_URL_TEST!;
  const name = `${decodeURIComponent(new URL(template).pathname.slice(1))}_${randomBytes(5).toString('hex')}`;
  return cloneDatabase(template, name);
}

export function testConfig(overrides: Record<string, string> = {}) {
  return loadConfig({
    ...process.env,
    DATABASE_URL: process.env.DATABASE_URL_TEST,
    DATABASE_POOL_MAX: '4',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
    // Tests act as a local proxy (X-Forwarded-For picks a client address); production trusts none by default.
    TRUST_PROXY: 'loopback',
    ...overrides,
  });
}

export async function startTestServer(
  opts: {
    worker?: boolean;
    env?: Record<string, string>;
    configure?: Parameters<typeof createApp>[1];
    /** Share another server's database (e.g. two API replicas); by default each server gets its own. */
    databaseUrl?: string;
  } = {},
): Promise<TestServer> {
  const ownDatabase = !opts.databaseUrl;
  const databaseUrl = opts.databaseUrl ?? (await createTestDatabase());
  const cfg = testConfig({ ...opts.env, DATABASE_URL: databaseUrl });
  const deps = await createDeps(cfg, 'test');
  const server: Server = await new Promise((resolve) => {
    const s = createApp(deps, opts.configure).listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  let listener: OutboxListener | undefined;
  if (opts.worker !== false) {
    worker = await createWorker(deps, { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! } });
    running = worker.run();
    // Wake-ups come from NOTIFY; the idle poll only bounds a lost one (kept short for tests on a busy machine).
    listener = await startOutboxListener(deps, cfg.TEMPORAL_TASK_QUEUE, { idleSeconds: 5 });
    await startCheckoutExpirySweeper(deps, cfg.TEMPORAL_TASK_QUEUE);
  }
  return {
    url,
    deps,
    databaseUrl,
    async close() {
      // A teardown that hangs is a leak (a connection never released, a response never read): say
      // which step waits instead of failing the file's afterAll with a bare hook timeout.
      let step = 'outbox listener';
      let leak: Error | undefined;
      const pools = () => [...createdPools].map((p) => `total ${p.totalCount} idle ${p.idleCount} waiting ${p.waitingCount}`).join('; ');
      const waiting = setInterval(() => console.error(`[harness] close() of ${url} still waiting on: ${step}; pools: ${pools()}`), 60_000);
      try {
        await listener?.stop();
        step = 'terminating the checkout-expiry sweeper';
        // The checkout-expiry sweeper of this task queue ends with the test file, also when a worker
        // process of the test (not this server) started it on this server's task queue.
        await deps.temporal.workflow
          .getHandle(checkoutExpirySweeperWorkflowId(cfg.TEMPORAL_TASK_QUEUE))
          .terminate('test finished')
          .catch(() => {});
        if (worker) {
          step = 'worker shutdown';
          // The long-lived dispatcher of this task queue ends with the test file.
          await deps.temporal.workflow
            .getHandle(outboxDispatcherWorkflowId(cfg.TEMPORAL_TASK_QUEUE))
            .terminate('test finished')
            .catch(() => {});
          worker.shutdown();
          await running;
        }
        step = 'HTTP server close (a connection still active)';
        await new Promise((r) => server.close(r));
        step = 'connections still lent out';
        const lent = await connectionsStillLent(deps);
        if (lent.length) {
          leak = new Error(
            `[harness] LEAK: ${lent.length} connection(s) of ${url} still lent ${LENT_GRACE_MS / 1000} s after its server and worker stopped; taken at:\n${lent.join('\n---\n')}`,
          );
          console.error(leak.message);
        }
        step = 'closeDeps (Temporal connection, processor pool, ORM pool)';
        // A pool still lending a connection after 100 s is reported, and the file's teardown goes on
        // (its tests have passed); the line above names the pool's state for finding the leak.
        let timer: NodeJS.Timeout | undefined;
        const closed = await Promise.race([
          closeDeps(deps).then(() => true),
          new Promise<false>((r) => (timer = setTimeout(() => r(false), 100_000))),
        ]);
        clearTimeout(timer);
        if (!closed) console.error(`[harness] LEAK: close() of ${url} gave up on ${step} after 100 s; pools: ${pools()}`);
      } finally {
        clearInterval(waiting);
      }
      if (ownDatabase) await dropDatabase(databaseUrl).catch(() => {});
      if (leak) throw leak;
    },
  };
}

export const uniqueEmail = (tag = 'user') => `${tag}-${randomUUID().slice(0, 8)}@example.com`;
export const uniqueSlug = (tag = 'org') => `${tag}-${randomUUID().slice(0, 8)}`;

/** A signed-in seller with an organization and an access token holding the given scopes. */
export async function seller(url: string, scopes: string[] = ['products:read', 'products:write']) {
  const email = uniqueEmail('seller');
  const signUp = await fetch(`${url}/api/auth/sign-up/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery', name: 'Sally Seller' }),
  });
  if (signUp.status !== 200) throw new Error(`sign-up failed: ${signUp.status} ${await signUp.text()}`);
  const cookie = signUp.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const orgRes = await fetch(`${url}/v1/organizations/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ name: 'Test Organization', slug: uniqueSlug() }),
  });
  if (orgRes.status !== 201) throw new Error(`org create failed: ${orgRes.status} ${await orgRes.text()}`);
  const organization = (await orgRes.json()) as { id: string; slug: string; name: string };
  const tokRes = await fetch(`${url}/v1/organization-access-tokens/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ organization_id: organization.id, comment: 'test', scopes }),
  });
  if (tokRes.status !== 201) throw new Error(`token create failed: ${tokRes.status} ${await tokRes.text()}`);
  const { token } = (await tokRes.json()) as { token: string };
  return { email, password: 'correct horse battery', cookie, organization, token };
}

/** Waits for a mail to reach the mail catcher (MailDev REST API), optionally one whose subject contains `subject`. */
export async function waitForMail(to: string, timeoutMs = 20_000, subject?: string): Promise<{ subject: string; text: string }[]> {
  const cfg = loadConfig();
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const res = await fetch(`${cfg.MAIL_UI_URL.replace('localhost', '127.0.0.1')}/email`);
    const all = (await res.json()) as { subject: string; text: string; to: { address: string }[] }[];
    const mine = all.filter((m) => m.to.some((t) => t.address.toLowerCase() === to.toLowerCase()));
    if (mine.length && (!subject || mine.some((m) => m.subject.includes(subject)))) return mine;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no mail to ${to} within ${timeoutMs} ms`);
}

export async function json(res: Response): Promise<any> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`not JSON (${res.status}): ${text.slice(0, 200)}`);
  }
}
