/**
 * A list's items and its `total_count` come from one snapshot. The list below is read while another
 * request commits a new row exactly between its two statements (the page and the count): the driver
 * holds the second back until the first has answered and the new row is committed. Read in two
 * snapshots, the page shows 2 endpoints and says there are 3.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { json, seller, startTestServer, type TestServer } from '../harness.ts';
import { root, serverSources } from '../unit/source-scan.ts';
import { bearer } from '../webhooks/receiver.ts';

type Query = (this: pg.Client, ...args: unknown[]) => unknown;
/**
 * Every pooled connection binds `query` when it connects (kit/lock-conflicts.ts), so the hook is
 * installed before the server opens its pool and decides per statement while a test arms it.
 */
const originalQuery = pg.Client.prototype.query as unknown as Query;
let hook: ((client: pg.Client, args: unknown[]) => unknown) | null = null;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  return hook ? hook(this, args) : originalQuery.apply(this, args);
} as never;

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
});
afterAll(async () => {
  await srv?.close();
  pg.Client.prototype.query = originalQuery as never;
});
afterEach(() => {
  hook = null;
});

/**
 * The next two statements that read `table` (a page and a count, in either order): `between()` runs
 * once the first has answered, and the first answers the caller and the second starts only after it.
 */
function commitBetweenTwoReads(table: string, between: () => Promise<void>): Promise<void> {
  let firstAnswered!: () => void;
  const committed = new Promise<void>((resolve) => (firstAnswered = resolve)).then(between);
  let seen = 0;
  hook = (client, args) => {
    const config = args[0] as string | { text?: string };
    const text = typeof config === 'string' ? config : config?.text;
    if (typeof text !== 'string' || !/^select /i.test(text) || !text.includes(`from "${table}"`)) return originalQuery.apply(client, args);
    if (++seen === 2) hook = null;
    if (seen === 1) {
      return (async () => {
        const answer = await (originalQuery.apply(client, args) as Promise<unknown>);
        firstAnswered();
        await committed;
        return answer;
      })();
    }
    return committed.then(() => originalQuery.apply(client, args));
  };
  return committed;
}

describe('a list read while a row is committed', () => {
  it('answers items and total_count that agree', { timeout: 15_000 }, async () => {
    const s = await seller(srv.url, ['webhooks:read', 'webhooks:write']);
    const api = bearer(srv.url, s.token);
    const create = async (n: number) => {
      const res = await api.post('/v1/webhooks/endpoints', { url: `https://example.com/hook/${n}`, events: ['order.created'] });
      expect(res.status).toBe(201);
    };
    await create(1);
    await create(2);
    const committed = commitBetweenTwoReads('webhook_endpoints', () => create(3));
    const page = await json(await api.get('/v1/webhooks/endpoints?limit=10'));
    await committed;

    expect(page.items.length).toBe(page.pagination.total_count);
    const after = await json(await api.get('/v1/webhooks/endpoints?limit=10'));
    expect(after.items).toHaveLength(3);
    expect(after.pagination.total_count).toBe(3);
  });

  it('is how every list in the API is counted', () => {
    const direct = serverSources(['api/src'])
      .filter((file) => file !== path.join('api', 'src', 'kit', 'db.ts'))
      .filter((file) => /\.findAndCount\(/.test(readFileSync(path.join(root, file), 'utf8')));
    expect(direct).toEqual([]);
  });
});
