/**
 * Schemathesis against a running API (issue #20): every operation of /openapi.json with the credential it
 * is meant for — an organization access token with every scope for seller routes, a seller's session
 * cookie for the user-only ones (organizations create, access tokens), a `polar_cst_` customer session
 * token for the customer portal, nothing for public routes. Used by tests/fuzz/schemathesis.test.ts
 * (short, fixed seed) and bench/fuzz/run.ts (long).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ORGANIZATION_TOKEN_SCOPES } from '../../api/src/kit/scopes.ts';
import { seller, uniqueEmail } from '../harness.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SCHEMATHESIS = path.join(ROOT, '.venv', 'bin', 'schemathesis');

/**
 * What must hold for every response: no 5xx, only documented statuses and content types, bodies matching
 * the response schema, and no request the document calls invalid accepted (the document is never
 * looser than the server).
 */
export const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_schema_conformance',
  'negative_data_rejection',
];
/**
 * Also "a request the document calls valid is accepted": reported by the long run only, since many
 * 422s are rules across fields or records no JSON Schema states (an id of another organization,
 * "exactly one of", a discount's duration fields, a file's parts covering its size).
 */
export const ALL_CHECKS = [...CHECKS, 'positive_data_acceptance'];

export interface Credentials {
  /** `polar_oat_…` with every organization scope (seller A). */
  token: string;
  /** Value of seller B's `better-auth.session_token` cookie. */
  sessionCookie: string;
  /** `polar_cst_…` of a customer of seller C's organization. */
  customerToken: string;
}

/**
 * Schemathesis reuses ids it has read (its resource pool): with one seller, a `DELETE` of the listed
 * access token or customer revokes the run's own credentials half-way. So each credential belongs to
 * its own seller: A's access token, B's session cookie, and a customer session of C's customer, whose
 * records neither A nor B can see.
 */
export async function fuzzCredentials(url: string): Promise<Credentials> {
  const a = await seller(url, [...ORGANIZATION_TOKEN_SCOPES]);
  const b = await seller(url, ['organizations:read']);
  const c = await seller(url, ['customers:write', 'customer_sessions:write']);
  const auth = { 'content-type': 'application/json', authorization: `Bearer ${c.token}` };
  const customer = await fetch(`${url}/v1/customers/`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ email: uniqueEmail('fuzz'), name: 'Fuzz Customer' }),
  });
  if (customer.status !== 201) throw new Error(`customer create: ${customer.status} ${await customer.text()}`);
  const { id } = (await customer.json()) as { id: string };
  const session = await fetch(`${url}/v1/customer-sessions/`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ customer_id: id }),
  });
  if (session.status !== 201) throw new Error(`customer session: ${session.status} ${await session.text()}`);
  const { token } = (await session.json()) as { token: string };
  const cookie = /(?:^|; )better-auth\.session_token=([^;]+)/.exec(b.cookie)?.[1];
  if (!cookie) throw new Error(`no session cookie in ${b.cookie}`);
  return { token: a.token, sessionCookie: cookie, customerToken: token };
}

/** schemathesis.toml: one credential per security scheme of the document (public routes take none). */
export function writeConfig(creds: Credentials, file: string, opts: { duplicateQueryParameters?: boolean } = {}): void {
  writeFileSync(
    file,
    [
      '[auth.openapi.access_token]',
      `bearer = ${JSON.stringify(creds.token)}`,
      '[auth.openapi.customer_session]',
      `bearer = ${JSON.stringify(creds.customerToken)}`,
      '[auth.openapi.session_cookie]',
      `api_key = ${JSON.stringify(creds.sessionCookie)}`,
      // Coverage probes of methods a path does not declare (405/404 from Express) and duplicated query
      // parameters say nothing about these routes' validation; NUL bytes are tests/security's subject.
      '[phases.coverage]',
      'unexpected-methods = []',
      `generate-duplicate-query-parameters = ${opts.duplicateQueryParameters ? 'true' : 'false'}`,
      '[generation]',
      'allow-x00 = false',
      // 413 (body over the size limit) is a rejection too.
      '[checks.negative_data_rejection]',
      `expected-statuses = ${JSON.stringify(['400', '401', '403', '404', '405', '406', '409', '413', '415', '422', '428', '429'])}`,
      '',
    ].join('\n'),
  );
}

export interface FuzzResult {
  exitCode: number;
  output: string;
  /** Figures from schemathesis' summary: operations tested, test cases generated (≈ requests), failing operations. */
  operations: number;
  failures: number;
  errors: number;
  /** One line per failing operation and what failed. */
  failed: string[];
  requests: number;
  seconds: number;
}

export interface FuzzOptions {
  maxExamples: number;
  seed?: number;
  /** With a seed: the same cases on every run (the test). false: random generation from the seed (the long run). */
  deterministic?: boolean;
  /** Coverage phase: also send query parameters twice (`?limit=1&limit=2`). */
  duplicateQueryParameters?: boolean;
  phases?: string;
  checks?: string[];
  workers?: number;
  extraArgs?: string[];
  /** Print schemathesis' output as it runs. */
  echo?: boolean;
  /** Also write schemathesis' whole output there. */
  outputFile?: string;
  /** Stop schemathesis after this long (its output so far is kept). */
  timeoutMs?: number;
}

export async function runSchemathesis(url: string, creds: Credentials, opts: FuzzOptions): Promise<FuzzResult> {
  if (!existsSync(SCHEMATHESIS)) throw new Error(`${SCHEMATHESIS} is missing: run node infra/bootstrap.mjs`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'emporia-fuzz-'));
  try {
    const config = path.join(dir, 'schemathesis.toml');
    writeConfig(creds, config, { duplicateQueryParameters: opts.duplicateQueryParameters });
    const args = [
      '--config-file', config,
      'run', `${url}/openapi.json`,
      '--checks', (opts.checks ?? CHECKS).join(','),
      '--max-examples', String(opts.maxExamples),
      '--workers', String(opts.workers ?? 2),
      '--output-truncate', 'true',
      '--request-timeout', '30',
      ...(opts.seed !== undefined ? ['--seed', String(opts.seed)] : []),
      ...(opts.seed !== undefined && opts.deterministic !== false ? ['--generation-deterministic'] : []),
      ...(opts.phases ? ['--phases', opts.phases] : []),
      ...(opts.extraArgs ?? []),
    ];
    const started = Date.now();
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve, reject) => {
      const child = spawn(SCHEMATHESIS, args, {
        cwd: dir,
        env: { ...process.env, NO_COLOR: '1', SCHEMATHESIS_TELEMETRY: 'false', COLUMNS: '160' },
      });
      let out = '';
      const take = (b: Buffer) => {
        out += b.toString();
        if (opts.echo) process.stdout.write(b);
      };
      child.stdout.on('data', take);
      child.stderr.on('data', take);
      const timer = opts.timeoutMs
        ? setTimeout(() => {
            out += `\n[schemathesis stopped after ${opts.timeoutMs} ms]\n`;
            child.kill('SIGTERM');
          }, opts.timeoutMs)
        : undefined;
      child.on('error', reject);
      child.on('close', (c) => {
        clearTimeout(timer);
        resolve({ code: c ?? 1, output: out });
      });
    });
    const seconds = (Date.now() - started) / 1000;
    if (opts.outputFile) writeFileSync(opts.outputFile, output);
    return { exitCode: code, output, seconds, ...summarize(output) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Figures and failing operations from schemathesis' own summary (plain text, NO_COLOR). */
export function summarize(output: string) {
  const operations = Number(/Tested: (\d+)/.exec(output)?.[1] ?? 0);
  const requests = Number(/(\d+) generated/.exec(output)?.[1] ?? 0);
  const failed: string[] = [];
  let errors = 0;
  for (const section of ['FAILURES', 'ERRORS'] as const) {
    const m = new RegExp(`={5,} ${section} ={5,}\\n([\\s\\S]*?)(?:\\n={5,} [A-Z]+ ={5,}|$)`).exec(output);
    if (!m) continue;
    for (const block of m[1]!.split(/\n_{3,} (?=\S)/).slice(0)) {
      const op = /^_*\s*(.+?) _{3,}/.exec(block)?.[1] ?? /^(.+?) _{3,}/.exec(block)?.[1];
      if (!op) continue;
      const what = [...block.matchAll(/^- (ST\d+ [^\n]+)|^(Schema Error|Network Error|[A-Z][a-z]+ Error)$/gm)].map((x) => x[1] ?? x[2]);
      const status = /^\[(\d{3})\][^\n]*\n\s*`([^\n]{0,200})/m.exec(block);
      failed.push(`${section === 'ERRORS' ? 'error ' : ''}${op}: ${[...new Set(what)].join(', ')}${status ? ` → ${status[1]} ${status[2]}` : ''}`);
      if (section === 'ERRORS') errors++;
    }
  }
  return { operations, requests, failures: failed.length - errors, errors, failed };
}
