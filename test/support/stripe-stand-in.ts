/**
 * A loopback stand-in for Stripe's API, speaking its wire format as the official `stripe` library
 * uses it: form-encoded bodies with bracketed keys (`metadata[userId]=...`), the secret key as a
 * Bearer token, `Idempotency-Key` honoured as Stripe does (the same key replays the first answer),
 * errors as `{error: {type, message}}`. It records every request, parsed, for tests to check what
 * Stripe would have received. Only the endpoints the platform calls.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FormValue = string | FormValue[] | { [key: string]: FormValue };

export interface RecordedStripeRequest {
  readonly method: string;
  readonly path: string;
  readonly contentType: string | undefined;
  readonly idempotencyKey: string | undefined;
  readonly authorization: string | undefined;
  readonly stripeVersion: string | undefined;
  /** The body as Stripe reads it: bracketed keys made nested objects, numeric ones arrays. */
  readonly form: Record<string, FormValue>;
  /** Whether an earlier request with the same idempotency key answered this one. */
  readonly replayed: boolean;
}

export interface StripeStandIn {
  readonly url: string;
  readonly requests: RecordedStripeRequest[];
  /** Objects created, by id (customers, sessions, accounts, transfers). */
  readonly objects: Map<string, Record<string, unknown>>;
  /** Subscriptions `GET /v1/subscriptions/{id}` answers; tests put them here, as Stripe would have them. */
  readonly subscriptions: Map<string, Record<string, unknown>>;
  /** When set, transfers are refused with this message. */
  failTransfersWith: string | null;
  requestsTo(method: string, path: string | RegExp): RecordedStripeRequest[];
  close(): Promise<void>;
}

/** Parses `a[b][0][c]=v` pairs into nested objects and arrays, as Stripe's API reads them. */
export function parseStripeForm(body: string): Record<string, FormValue> {
  const root: Record<string, FormValue> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.replace(/\]/g, '').split('[');
    let node: Record<string, FormValue> | FormValue[] = root;
    path.forEach((part, index) => {
      const last = index === path.length - 1;
      const nextIsIndex = !last && /^\d+$/.test(path[index + 1]!);
      const container = node as Record<string, FormValue>;
      if (last) container[part] = value;
      else {
        container[part] ??= nextIsIndex ? [] : {};
        node = container[part] as Record<string, FormValue>;
      }
    });
  }
  return root;
}

const id = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

export async function startStripeStandIn(secretKey: string): Promise<StripeStandIn> {
  const requests: RecordedStripeRequest[] = [];
  const objects = new Map<string, Record<string, unknown>>();
  const subscriptions = new Map<string, Record<string, unknown>>();
  const idempotent = new Map<string, { status: number; body: unknown }>();
  const state = { failTransfersWith: null as string | null };

  function answer(method: string, path: string, form: Record<string, FormValue>): { status: number; body: unknown } {
    const create = (prefix: string, object: string, fields: Record<string, unknown>) => {
      const made = { id: id(prefix), object, created: Math.floor(Date.now() / 1000), livemode: false, ...fields };
      objects.set(made.id, made);
      return { status: 200, body: made };
    };
    if (method === 'POST' && path === '/v1/customers') return create('cus', 'customer', { email: form['email'] ?? null, metadata: form['metadata'] ?? {} });
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      const sessionId = id('cs_test');
      const made = {
        id: sessionId,
        object: 'checkout.session',
        url: `https://checkout.stripe.com/c/pay/${sessionId}`,
        mode: form['mode'],
        customer: form['customer'],
        metadata: form['metadata'] ?? {},
        subscription: null,
      };
      objects.set(sessionId, made);
      return { status: 200, body: made };
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      const made = create('bps', 'billing_portal.session', { customer: form['customer'], return_url: form['return_url'] });
      return { status: 200, body: { ...(made.body as object), url: `https://billing.stripe.com/p/session/${(made.body as { id: string }).id}` } };
    }
    const sub = /^\/v1\/subscriptions\/([^/]+)$/.exec(path);
    if (sub) {
      const found = subscriptions.get(sub[1]!);
      if (!found)
        return { status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such subscription: '${sub[1]}'` } } };
      if (method === 'POST') {
        if (form['cancel_at_period_end'] !== undefined) found['cancel_at_period_end'] = form['cancel_at_period_end'] === 'true';
      }
      return { status: 200, body: found };
    }
    if (method === 'POST' && path === '/v1/accounts')
      return create('acct', 'account', {
        type: form['type'],
        email: form['email'] ?? null,
        metadata: form['metadata'] ?? {},
        payouts_enabled: true,
        charges_enabled: true,
        details_submitted: true,
      });
    const account = /^\/v1\/accounts\/([^/]+)(\/login_links)?$/.exec(path);
    if (account) {
      const found = objects.get(account[1]!);
      if (!found)
        return { status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such account: '${account[1]}'` } } };
      if (account[2]) return { status: 200, body: { object: 'login_link', created: 0, url: `https://connect.stripe.com/express/${account[1]}` } };
      return { status: 200, body: found };
    }
    if (method === 'POST' && path === '/v1/account_links')
      return { status: 200, body: { object: 'account_link', created: 0, expires_at: 0, url: `https://connect.stripe.com/setup/e/${String(form['account'])}` } };
    if (method === 'POST' && path === '/v1/transfers') {
      if (state.failTransfersWith !== null) return { status: 400, body: { error: { type: 'invalid_request_error', message: state.failTransfersWith } } };
      return create('tr', 'transfer', {
        amount: Number(form['amount']),
        currency: form['currency'],
        destination: form['destination'],
        metadata: form['metadata'] ?? {},
      });
    }
    return { status: 404, body: { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` } } };
  }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const method = req.method ?? 'GET';
      const form = parseStripeForm(method === 'GET' ? url.searchParams.toString() : text);
      const key = req.headers['idempotency-key'] as string | undefined;
      const replay = key !== undefined ? idempotent.get(`${method} ${url.pathname} ${key}`) : undefined;
      requests.push({
        method,
        path: url.pathname,
        contentType: req.headers['content-type'],
        idempotencyKey: key,
        authorization: req.headers['authorization'],
        stripeVersion: req.headers['stripe-version'] as string | undefined,
        form,
        replayed: replay !== undefined,
      });
      let result: { status: number; body: unknown };
      if (req.headers['authorization'] !== `Bearer ${secretKey}`)
        result = { status: 401, body: { error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } } };
      else result = replay ?? answer(method, url.pathname, form);
      if (key !== undefined && replay === undefined && result.status < 500) idempotent.set(`${method} ${url.pathname} ${key}`, result);
      res.writeHead(result.status, { 'content-type': 'application/json', 'request-id': id('req'), ...(replay ? { 'idempotent-replayed': 'true' } : {}) });
      res.end(JSON.stringify(result.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    objects,
    subscriptions,
    get failTransfersWith() {
      return state.failTransfersWith;
    },
    set failTransfersWith(value: string | null) {
      state.failTransfersWith = value;
    },
    requestsTo: (method, path) => requests.filter((r) => r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path))),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
