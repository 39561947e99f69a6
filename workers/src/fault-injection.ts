/**
 * TEST-ONLY fault injection for the crash tests (tests/crash). Inert unless `EMPORIA_FAULT_INJECT`
 * is set; never set it in production.
 *
 * `EMPORIA_FAULT_INJECT` is a comma-separated list of `<step>:<point>[@<key>][=<action>]`, e.g.
 * `createOrderStep:after-commit@<checkout id>=kill`:
 * - `step` and `point` name the place (`before`, `after-commit`) an activity calls `faultPoint` from;
 * - `key` (optional) limits the fault to one business key (the checkout id), so one worker can carry
 *   faults for several checkouts;
 * - `action` is `kill` (default: SIGKILL this process, as a crash would), `fail` (throw a
 *   non-retryable ApplicationFailure, a step that fails for good) or `delay-<ms>` (wait, at a
 *   `faultDelay` point: a slow commit).
 * With `EMPORIA_FAULT_STATE_DIR` set, each fault fires once across restarts: a marker file is written
 * there before it fires, so the restarted worker carrying the same list recovers instead of dying again.
 */
import { mkdirSync, openSync, closeSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import type { PaymentProcessor } from '@emporia/api/src/modules/payments/index.ts';

interface Fault {
  spec: string;
  point: string;
  key: string | null;
  action: 'kill' | 'fail' | `delay-${number}`;
}

function parse(raw: string | undefined): Fault[] {
  if (!raw) return [];
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((spec) => {
      const [where, action = 'kill'] = spec.split('=') as [string, string?];
      const [point, key = null] = where.split('@') as [string, string?];
      if (action !== 'kill' && action !== 'fail' && !/^delay-\d+$/.test(action)) {
        throw new Error(`EMPORIA_FAULT_INJECT: unknown action in '${spec}'`);
      }
      return { spec, point, key, action: action as Fault['action'] };
    });
}

const faults = parse(process.env.EMPORIA_FAULT_INJECT);

/** Claims the fault's once-only marker; false when it already fired (in this or an earlier process). */
function claim(f: Fault): boolean {
  const dir = process.env.EMPORIA_FAULT_STATE_DIR;
  if (!dir) return true;
  mkdirSync(dir, { recursive: true });
  try {
    closeSync(openSync(path.join(dir, encodeURIComponent(f.spec)), 'wx'));
    return true;
  } catch {
    return false;
  }
}

/** Crashes or fails here when a test asked for it (`step:point`, for `key`); a no-op otherwise. */
export function faultPoint(point: string, key?: string): void {
  if (!faults.length) return;
  for (const f of faults) {
    if (f.point !== point || (f.key !== null && f.key !== key) || f.action.startsWith('delay-')) continue;
    if (!claim(f)) continue;
    if (f.action === 'fail') throw ApplicationFailure.nonRetryable(`injected fault at ${point}`, 'InjectedFault');
    process.kill(process.pid, 'SIGKILL');
  }
}

/** Waits here when a test asked for a `delay-<ms>` at this point; resolves at once otherwise. */
export async function faultDelay(point: string, key?: string): Promise<void> {
  for (const f of faults) {
    if (f.point !== point || (f.key !== null && f.key !== key) || !f.action.startsWith('delay-')) continue;
    await new Promise((r) => setTimeout(r, Number(f.action.slice('delay-'.length))));
  }
}

/** Runs `fn` between the `<step>:before` and `<step>:after-commit` fault points. */
export async function withFaultPoints<T>(step: string, key: string, fn: () => Promise<T>): Promise<T> {
  faultPoint(`${step}:before`, key);
  const result = await fn();
  faultPoint(`${step}:after-commit`, key);
  return result;
}

/** Whether this process carries any injected fault (tests only). */
export function faultsInjected(): boolean {
  return faults.length > 0;
}

/**
 * The processor with a fault point right after each off-session charge and refund, before the caller
 * records the outcome: `processor.chargeOffSession:after@<subscription id>`,
 * `processor.refund:after@<refund id>` (a worker killed mid-renewal or mid-refund); and a
 * `processor.refund:before` delay point (a slow refund still running when the worker is stopped).
 */
export function withProcessorFaultPoints(processor: PaymentProcessor): PaymentProcessor {
  const wrapped = Object.create(processor) as PaymentProcessor;
  wrapped.chargeOffSession = async (input) => {
    const result = await processor.chargeOffSession(input);
    faultPoint('processor.chargeOffSession:after', input.metadata?.subscription_id);
    return result;
  };
  wrapped.refund = async (input) => {
    const refundId = input.idempotencyKey.replace(/^refund:/, '');
    await faultDelay('processor.refund:before', refundId);
    const result = await processor.refund(input);
    faultPoint('processor.refund:after', refundId);
    return result;
  };
  return wrapped;
}
