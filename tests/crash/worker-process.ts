/**
 * The real worker (`workers/src/main.ts`) as a separate OS process, so a test can SIGKILL it (or let
 * an injected fault kill it) and start it again. It uses the run's prebuilt workflow bundle, the test
 * file's database and its own task queue.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface WorkerProcess {
  child: ChildProcess;
  /** Resolves when the process has exited, with its exit code or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it wrote (for failure messages). */
  output(): string;
  /** SIGTERM (graceful shutdown), SIGKILL after `graceMs`; resolves once it exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface WorkerOptions {
  databaseUrl: string;
  taskQueue: string;
  /** EMPORIA_FAULT_INJECT entries (workers/src/fault-injection.ts). */
  faults?: string[];
  /** Where fired faults leave their once-only markers. */
  faultStateDir?: string;
  env?: Record<string, string>;
}

/** Starts a worker process and waits until it polls its task queue ("worker started"). */
export async function startWorkerProcess(opts: WorkerOptions, timeoutMs = 60_000): Promise<WorkerProcess> {
  // Node itself (not the tsx wrapper), so the signal that ends the worker is the one we observe.
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: opts.databaseUrl,
      DATABASE_POOL_MAX: '4',
      TEMPORAL_TASK_QUEUE: opts.taskQueue,
      LOG_LEVEL: 'info',
      EMPORIA_WORKFLOW_BUNDLE: process.env.WORKFLOW_BUNDLE_PATH!,
      EMPORIA_FAULT_INJECT: (opts.faults ?? []).join(','),
      EMPORIA_FAULT_STATE_DIR: opts.faultStateDir ?? '',
      EMPORIA_WORKFLOW_SWEEP_SECONDS: '1',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let onLine: (() => void) | undefined;
  const collect = (chunk: Buffer) => {
    out += chunk.toString();
    if (out.length > 200_000) out = out.slice(-100_000);
    onLine?.();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const proc: WorkerProcess = {
    child,
    exited,
    output: () => out,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start in ${timeoutMs} ms:\n${out.slice(-3000)}`)), timeoutMs);
    onLine = () => {
      if (out.includes('worker started')) {
        clearTimeout(timer);
        onLine = undefined;
        resolve();
      }
    };
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`worker exited (${code ?? signal}) before it started:\n${out.slice(-3000)}`));
    });
    onLine();
  }).catch(async (err: unknown) => {
    await proc.stop(1000);
    throw err;
  });
  return proc;
}

/** Waits for the process to die (an injected fault killed it); throws if it is still alive after `timeoutMs`. */
export async function waitForExit(w: WorkerProcess, timeoutMs = 60_000) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`worker still running after ${timeoutMs} ms:\n${w.output().slice(-3000)}`)), timeoutMs);
  });
  try {
    return await Promise.race([w.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
