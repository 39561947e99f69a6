/**
 * Benchmarks (not tests): request latency of the running API (`npm start` first).
 * Prints p50/p95 per endpoint and the machine it ran on; asserts nothing.
 *   npm run bench -- [baseUrl] [requests]
 */
import os from 'node:os';

const base = process.argv[2] ?? 'http://127.0.0.1:8000';
const n = Number(process.argv[3] ?? 200);

async function measure(name: string, fn: () => Promise<Response>) {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await fn();
    await res.arrayBuffer();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!.toFixed(2);
  console.log(`${name.padEnd(28)} n=${n}  p50=${q(0.5)} ms  p95=${q(0.95)} ms`);
  return Number(q(0.5));
}

console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`);
const health = await measure('GET /healthz', () => fetch(`${base}/healthz`));
const notFound = await measure('GET /v1/unknown (404)', () => fetch(`${base}/v1/unknown`));
const openapi = await measure('GET /openapi.json', () => fetch(`${base}/openapi.json`));
console.log(`ratios to the 404 path: healthz ${(health / notFound).toFixed(2)}, openapi ${(openapi / notFound).toFixed(2)}`);
