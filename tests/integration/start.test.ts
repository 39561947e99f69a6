/**
 * `npm start`'s orchestrator: with the backing services given through the environment it starts the
 * API and the worker, prints every URL, serves them, and stops everything cleanly on Ctrl-C (SIGINT).
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../api/src/config.ts';
import { dropDatabase, isPortOpen } from '../../infra/src/services.ts';
import { createTestDatabase } from '../harness.ts';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

describe('npm start orchestration', () => {
  it('starts the API and worker, prints the URLs, and stops on Ctrl-C', async () => {
    const cfg = loadConfig();
    const port = await freePort();
    const databaseUrl = await createTestDatabase();
    const child = spawn(path.resolve('node_modules/.bin/tsx'), ['infra/src/start.ts'], {
      env: {
        ...process.env,
        PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        DATABASE_URL: databaseUrl,
        TEMPORAL_ADDRESS: cfg.TEMPORAL_ADDRESS,
        S3_ENDPOINT: cfg.S3_ENDPOINT,
        SMTP_URL: cfg.SMTP_URL,
        TEMPORAL_TASK_QUEUE: `start-test-${port}`,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));

    const deadline = Date.now() + 120_000;
    while (!out.includes('Press Ctrl-C to stop.') && Date.now() < deadline && child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(out, out).toContain('Emporia is running');
    for (const label of ['API', 'OpenAPI document', 'Admin UI', 'Customer portal', 'Temporal Web UI', 'Mail catcher UI']) {
      expect(out).toContain(label);
    }
    expect(out).toContain(`http://127.0.0.1:${port}/dashboard/`);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

    child.kill('SIGINT');
    // 130 = terminated by SIGINT, as a shell reports Ctrl-C.
    expect(await exited).toBe(130);
    expect(out).toContain('[stack] stopped');
    expect(await isPortOpen('127.0.0.1', port)).toBe(false);
    await dropDatabase(databaseUrl);
  }, 180_000);
});
