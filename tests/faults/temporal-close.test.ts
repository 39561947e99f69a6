/**
 * Closing the API's Temporal client while a call is still being retried (Temporal unreachable): the
 * call ends with CANCELLED, and nothing is thrown later from the retry's timer, which would crash the
 * API process at shutdown.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../api/src/config.ts';
import { closeTemporal, connectTemporal } from '../../api/src/kit/temporal.ts';

/** A TCP proxy to the Temporal server that can be cut: then every connection to it is refused. */
let proxy: net.Server;
const sockets = new Set<net.Socket>();

beforeAll(async () => {
  const [host, port] = loadConfig().TEMPORAL_ADDRESS.split(':') as [string, string];
  proxy = net.createServer((client) => {
    const upstream = net.connect(Number(port), host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
});

afterAll(() => proxy?.close());

/** Runs `work` with the process's uncaught exceptions collected in `escaped` instead of failing the run. */
async function catchingEscapes(work: (escaped: unknown[]) => Promise<void>): Promise<void> {
  const escaped: unknown[] = [];
  const onUncaught = (err: unknown) => escaped.push(err);
  process.on('uncaughtException', onUncaught);
  try {
    await work(escaped);
  } finally {
    process.off('uncaughtException', onUncaught);
  }
}

/** A call's outcome as `code: details`, or 'answered'. */
const outcomeOf = (call: Promise<unknown>) =>
  call.then(
    () => 'answered',
    (err: { code?: number; details?: string }) => `${err.code}: ${err.details}`,
  );

describe('the Temporal client closed while a call is retried', () => {
  it('ends the call with CANCELLED and throws nothing afterwards', async () => {
    await catchingEscapes(async (escaped) => {
      const address = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const client = await connectTemporal({ TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: 'default' });
      expect((await client.connection.workflowService.getSystemInfo({})).capabilities).toBeTruthy();

      // Temporal unreachable: the call fails with UNAVAILABLE and its retries wait on a timer.
      proxy.close();
      for (const s of sockets) s.destroy();
      const call = outcomeOf(client.connection.workflowService.getSystemInfo({}));
      await new Promise((r) => setTimeout(r, 400));

      await closeTemporal(client);
      const outcome = await Promise.race([
        call,
        new Promise((resolve) => {
          const check = setInterval(() => escaped.length > 0 && (clearInterval(check), resolve('thrown')), 50);
          setTimeout(() => (clearInterval(check), resolve('still pending')), 15_000).unref();
        }),
      ]);
      expect(outcome).toBe('1: The Temporal connection was closed');
      // Long enough for any retry timer scheduled before the close to have fired.
      await new Promise((r) => setTimeout(r, 6_000));
      expect(escaped).toEqual([]);
    });
  }, 40_000);

  it('ends a call made after the close with CANCELLED and throws nothing', async () => {
    await catchingEscapes(async (escaped) => {
      const client = await connectTemporal(loadConfig());
      await closeTemporal(client);
      expect(await outcomeOf(client.connection.workflowService.getSystemInfo({}))).toBe('1: The Temporal connection was closed');
      await new Promise((r) => setTimeout(r, 500));
      expect(escaped).toEqual([]);
    });
  }, 20_000);
});
