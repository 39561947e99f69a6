/**
 * `npm run reset`: empties the local stack's data — the embedded PostgreSQL cluster, the Temporal dev
 * server's database, the object store, logs and benchmark/test leftovers under .data/ — and keeps
 * everything that is configuration or installation: environment variables, .venv, node_modules and
 * the built apps. The next `npm start` begins from an empty stack. Refuses while the stack is running.
 */
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { DEFAULTS, loadConfig } from '../../api/src/config.ts';
import { DATA_DIR, isPortOpen } from './services.ts';

function sizeOf(p: string): number {
  const st = statSync(p, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.size;
  return readdirSync(p).reduce((s, f) => s + sizeOf(path.join(p, f)), 0);
}

const cfg = loadConfig();
const ports: [string, number][] = [
  ['PostgreSQL', Number(new URL(cfg.DATABASE_URL).port || DEFAULTS.PG_PORT)],
  ['Temporal', Number(cfg.TEMPORAL_ADDRESS.split(':')[1])],
  ['API', cfg.PORT],
];
for (const [name, port] of ports) {
  if (await isPortOpen('127.0.0.1', port)) {
    console.error(`${name} still answers on :${port}: stop \`npm start\` (Ctrl-C) before resetting.`);
    process.exit(1);
  }
}

if (!existsSync(DATA_DIR) || readdirSync(DATA_DIR).length === 0) {
  console.log('Nothing to reset: .data/ is empty.');
  process.exit(0);
}
const entries = readdirSync(DATA_DIR).map((f) => path.join(DATA_DIR, f));
const total = entries.reduce((s, p) => s + sizeOf(p), 0);
console.log(`This deletes every local record (database, workflow history, stored files, mail): ${(total / 1e6).toFixed(0)} MB in .data/.`);
console.log('Environment variables, .venv, node_modules and the built apps are kept.');
if (!process.argv.includes('--yes')) {
  if (!process.stdin.isTTY) {
    console.error('Run `npm run reset -- --yes` to confirm.');
    process.exit(1);
  }
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  const answer = await rl.question('Type "reset" to confirm: ');
  rl.close();
  if (answer.trim() !== 'reset') {
    console.log('Nothing deleted.');
    process.exit(1);
  }
}
for (const p of entries) rmSync(p, { recursive: true, force: true });
console.log(`Deleted ${(total / 1e6).toFixed(0)} MB. \`npm start\` starts from an empty stack.`);
