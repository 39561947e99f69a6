/**
 * A local HTTP server that speaks the part of Stripe's API our adapter uses (form-encoded requests,
 * Bearer secret key, Idempotency-Key replay, card errors as 402). Stripe cannot be reached from here;
 * this stands in for it at the protocol level so the real `stripe` SDK is exercised end to end.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DECLINES, TEST_TOKENS } from '../../api/src/modules/payments/cards.ts';

type Obj = Record<string, any>;
const id = (p: string) => `${p}_${randomBytes(12).toString('hex')}`;

/** Parses Stripe's bracket notation: `metadata[a]=1&expand[0]=payment_method`. */
function parseForm(body: string): Obj {
  const out: Obj = {};
  for (const [rawKey, value] of new URLSearchParams(body)) {
    const parts = rawKey.replace(/\]/g, '').split('[');
    let cur = out;
    parts.forEach((part, i) => {
      if (i === parts.length - 1) cur[part] = value;
      else cur = cur[part] ??= /^\d+$/.test(parts[i + 1]!) ? [] : {};
    });
  }
  return out;
}

export interface FakeStripe {
  url: string;
  secretKey: string;
  requests: { method: string; path: string; idempotencyKey: string | undefined; body: Obj }[];
  close(): Promise<void>;
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const secretKey = `sk_test_${randomBytes(16).toString('hex')}`;
  const customers = new Map<string, Obj>();
  const paymentMethods = new Map<string, Obj & { outcome: string }>();
  const charges = new Map<string, Obj>();
  const idempotent = new Map<string, { status: number; body: Obj }>();
  const requests: FakeStripe['requests'] = [];

  const pmView = (pm: Obj) => ({
    id: pm.id,
    object: 'payment_method',
    type: 'card',
    customer: pm.customer ?? null,
    card: { brand: pm.brand, last4: pm.last4, exp_month: pm.exp_month, exp_year: pm.exp_year, wallet: null },
  });
  const cardError = (decline: { code: string; declineCode: string; message: string }, chargeId: string | null, piId: string | null) => ({
    status: 402,
    body: {
      error: {
        type: 'card_error',
        code: decline.code,
        decline_code: decline.declineCode,
        message: decline.message,
        charge: chargeId,
        payment_intent: piId ? { id: piId, object: 'payment_intent', status: 'requires_payment_method', latest_charge: chargeId } : undefined,
      },
    },
  });
  const invalid = (message: string, code: string, status = 400) => ({ status, body: { error: { type: 'invalid_request_error', code, message } } });

  function pmFromToken(token: string, customer: string | null): Obj & { outcome: string } {
    const t = TEST_TOKENS[token];
    if (!t) throw invalid(`No such confirmationtoken: '${token}'`, 'resource_missing', 404);
    const pm = { id: id('pm'), brand: t.brand, last4: t.last4, exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, outcome: t.outcome, customer };
    paymentMethods.set(pm.id, pm);
    return pm;
  }

  function handle(method: string, path: string, body: Obj): { status: number; body: Obj } {
    if (method === 'POST' && path === '/v1/customers') {
      const c = { id: id('cus'), object: 'customer', email: body.email ?? null, name: body.name ?? null };
      customers.set(c.id, c);
      return { status: 200, body: c };
    }
    if (method === 'POST' && (path === '/v1/payment_intents' || path === '/v1/setup_intents')) {
      if (body.customer && !customers.has(body.customer)) return invalid(`No such customer: '${body.customer}'`, 'resource_missing', 404);
      const pm = body.confirmation_token ? pmFromToken(body.confirmation_token, null) : paymentMethods.get(body.payment_method);
      if (!pm || (body.payment_method && pm.customer !== body.customer)) return invalid(`No such PaymentMethod: '${body.payment_method}'`, 'resource_missing', 404);
      const expand: string[] = body.expand ?? [];
      const isSetup = path === '/v1/setup_intents';
      const attachable = pm.outcome === 'succeed' || pm.outcome === 'charge_fails';
      if (isSetup) {
        if (!attachable) return cardError(DECLINES[pm.outcome as keyof typeof DECLINES], null, null);
        pm.customer = body.customer;
        return { status: 200, body: { id: id('seti'), object: 'setup_intent', status: 'succeeded', payment_method: expand.includes('payment_method') ? pmView(pm) : pm.id } };
      }
      const amount = Number(body.amount);
      const piId = id('pi');
      const chargeId = id('ch');
      if (pm.outcome !== 'succeed') {
        if (body.setup_future_usage && pm.outcome === 'charge_fails') pm.customer = body.customer;
        return cardError(DECLINES[pm.outcome as keyof typeof DECLINES], chargeId, piId);
      }
      if (body.setup_future_usage) pm.customer = body.customer;
      charges.set(chargeId, { id: chargeId, amount, refunded: 0 });
      return {
        status: 200,
        body: {
          id: piId,
          object: 'payment_intent',
          status: 'succeeded',
          amount,
          currency: body.currency,
          customer: body.customer ?? null,
          latest_charge: chargeId,
          payment_method: expand.includes('payment_method') ? pmView(pm) : pm.id,
          metadata: body.metadata ?? {},
        },
      };
    }
    const pmMatch = /^\/v1\/payment_methods\/([^/]+)(\/detach)?$/.exec(path);
    if (pmMatch) {
      const pm = paymentMethods.get(pmMatch[1]!);
      if (!pm) return invalid(`No such PaymentMethod: '${pmMatch[1]}'`, 'resource_missing', 404);
      if (pmMatch[2] && method === 'POST') pm.customer = null;
      return { status: 200, body: pmView(pm) };
    }
    if (method === 'POST' && path === '/v1/refunds') {
      const ch = charges.get(body.charge);
      if (!ch) return invalid(`No such charge: '${body.charge}'`, 'resource_missing', 404);
      const amount = Number(body.amount ?? ch.amount - ch.refunded);
      if (ch.refunded + amount > ch.amount) {
        return invalid(`Refund amount (${amount}) is greater than unrefunded amount on charge (${ch.amount - ch.refunded})`, 'amount_too_large');
      }
      ch.refunded += amount;
      return { status: 200, body: { id: id('re'), object: 'refund', status: 'succeeded', amount, charge: ch.id } };
    }
    return invalid(`Unrecognized request URL (${method}: ${path})`, 'resource_missing', 404);
  }

  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const body = { ...Object.fromEntries(url.searchParams), ...parseForm(raw) };
      const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
      requests.push({ method: req.method ?? 'GET', path: url.pathname, idempotencyKey, body });
      let result: { status: number; body: Obj };
      if (req.headers.authorization !== `Bearer ${secretKey}`) {
        result = { status: 401, body: { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } } };
      } else if (idempotencyKey && idempotent.has(idempotencyKey)) {
        result = idempotent.get(idempotencyKey)!;
      } else {
        try {
          result = handle(req.method ?? 'GET', url.pathname, body);
        } catch (thrown) {
          result = thrown as { status: number; body: Obj };
        }
        if (idempotencyKey && req.method === 'POST') idempotent.set(idempotencyKey, result);
      }
      res.writeHead(result.status, { 'content-type': 'application/json', 'request-id': id('req') });
      res.end(JSON.stringify(result.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    secretKey,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
