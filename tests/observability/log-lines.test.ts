/**
 * The production logger writes its lines in batches (kit/logger.ts): every line still reaches stdout,
 * whole and in order, while the process keeps running without logging more (a quiet API's last
 * request), and when it exits or dies of an uncaught exception right after logging.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'log-lines-child.ts');

function run(mode: 'stay' | 'exit' | 'throw', count: number, until?: (out: string) => boolean) {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, mode, String(count)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  return new Promise<{ out: string; code: number | null }>((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (until?.(out)) child.stdin.end();
    });
    child.once('close', (code) => resolve({ out, code }));
  });
}

const lines = (out: string) => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

it('writes a request line while the process keeps running and logs nothing more', { timeout: 30_000 }, async () => {
  // The child leaves only once its line has been read: a line kept in memory fails by the timeout.
  const { out } = await run('stay', 1, (o) => o.includes('\n'));
  const [line, ...rest] = lines(out);
  expect(rest).toEqual([]);
  expect(line).toMatchObject({ level: 30, service: 'api', requestId: 'r0', method: 'GET', path: '/v1/orders/', status: 200, durationMs: 1.5, msg: 'request' });
  expect(typeof line!.time).toBe('number');
});

it('writes every line, in order, when the process exits right after logging', { timeout: 30_000 }, async () => {
  const { out, code } = await run('exit', 500);
  expect(code).toBe(0);
  expect(lines(out).map((l) => l.requestId)).toEqual(Array.from({ length: 500 }, (_, i) => `r${i}`));
});

it('writes every line when the process dies of an uncaught exception', { timeout: 30_000 }, async () => {
  const { out, code } = await run('throw', 500);
  expect(code).not.toBe(0);
  expect(lines(out).map((l) => l.requestId)).toEqual(Array.from({ length: 500 }, (_, i) => `r${i}`));
});
