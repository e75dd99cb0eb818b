import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

/**
 * A local stand-in for the parts of Stripe's API the service uses: customers, Checkout sessions, billing
 * portal sessions and subscription lists. It speaks Stripe's wire format (form-encoded requests with
 * bracketed keys, JSON objects and Stripe's error shape), honours Idempotency-Key like Stripe does (the
 * same key answers the first response again), and records every request. Tests build webhook events from
 * the objects it holds and sign them with the SDK's own test-header helper.
 */

type RecordedRequest = {
  method: string;
  path: string;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
  idempotencyKey: string | undefined;
  authorization: string | undefined;
};

type StripeObject = Record<string, unknown> & { id: string };

export type FakeStripe = Awaited<ReturnType<typeof startFakeStripe>>;

const now = () => Math.floor(Date.now() / 1000);
const newId = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('hex')}`;

export async function startFakeStripe() {
  const requests: RecordedRequest[] = [];
  const idempotent = new Map<string, { status: number; body: unknown }>();
  const customers = new Map<string, StripeObject>();
  const sessions = new Map<string, StripeObject>();
  const subscriptions = new Map<string, StripeObject>();
  let delayMs = 0;

  const routes: Record<string, (body: Record<string, unknown>, query: Record<string, unknown>) => { status: number; body: unknown }> = {
    'POST /v1/customers': (body) => {
      const customer = { id: newId('cus'), object: 'customer', created: now(), email: body.email ?? null, metadata: body.metadata ?? {}, livemode: false };
      customers.set(customer.id, customer);
      return { status: 200, body: customer };
    },
    'POST /v1/checkout/sessions': (body) => {
      if (!body.customer || !customers.has(String(body.customer))) return stripeError(400, `No such customer: '${String(body.customer)}'`, 'customer');
      const items = (body.line_items as { price?: string; price_data?: { unit_amount?: string; currency?: string }; quantity?: string }[] | undefined) ?? [];
      const [item] = items;
      if (!item || (!item.price && !item.price_data)) return stripeError(400, 'line_items[0] needs a price or price_data', 'line_items');
      const id = newId('cs');
      const session = {
        id,
        object: 'checkout.session',
        created: now(),
        expires_at: now() + 24 * 3600,
        mode: body.mode,
        customer: body.customer,
        client_reference_id: body.client_reference_id ?? null,
        metadata: body.metadata ?? {},
        success_url: body.success_url,
        cancel_url: body.cancel_url,
        currency: item.price_data?.currency ?? 'usd',
        amount_subtotal: Number(item.price_data?.unit_amount ?? 0),
        amount_total: Number(item.price_data?.unit_amount ?? 0),
        payment_status: 'unpaid',
        status: 'open',
        subscription: null,
        payment_intent: null,
        url: `https://checkout.stripe.test/c/pay/${id}`,
        livemode: false,
      };
      sessions.set(id, session);
      return { status: 200, body: session };
    },
    'POST /v1/billing_portal/sessions': (body) => {
      if (!body.customer || !customers.has(String(body.customer))) return stripeError(400, `No such customer: '${String(body.customer)}'`, 'customer');
      const id = newId('bps');
      return { status: 200, body: { id, object: 'billing_portal.session', created: now(), customer: body.customer, return_url: body.return_url ?? null, url: `https://billing.stripe.test/p/session/${id}`, livemode: false } };
    },
    'GET /v1/subscriptions': (_body, query) => {
      const data = [...subscriptions.values()]
        .filter((subscription) => !query.customer || subscription.customer === query.customer)
        .sort((a, b) => Number(b.created) - Number(a.created))
        .slice(0, Number(query.limit ?? 10));
      return { status: 200, body: { object: 'list', data, has_more: false, url: '/v1/subscriptions' } };
    },
  };

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake-stripe');
    const raw = await readBody(req);
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: parseForm(url.search.slice(1)),
      body: parseForm(raw),
      idempotencyKey: header(req, 'idempotency-key'),
      authorization: header(req, 'authorization'),
    };
    requests.push(record);
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    let answer: { status: number; body: unknown };
    const cacheKey = record.idempotencyKey && `${record.method} ${record.path} ${record.idempotencyKey}`;
    const cached = cacheKey ? idempotent.get(cacheKey) : undefined;
    if (!record.authorization?.startsWith('Bearer sk_test_')) answer = stripeError(401, 'Invalid API Key provided.');
    else if (cached) answer = cached;
    else {
      const route = routes[`${record.method} ${record.path}`];
      answer = route ? route(record.body, record.query) : stripeError(404, `Unrecognized request URL (${record.method}: ${record.path}).`);
      if (cacheKey && answer.status < 500) idempotent.set(cacheKey, answer);
    }
    if (res.destroyed) return;
    res.writeHead(answer.status, { 'Content-Type': 'application/json', 'Request-Id': newId('req') }).end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    apiBase: `http://127.0.0.1:${port}`,
    requests,
    customers,
    sessions,
    subscriptions,
    /** Requests other than reads, i.e. the ones that must carry an Idempotency-Key. */
    writes: () => requests.filter((request) => request.method === 'POST'),
    /** Makes every answer wait this long (the service's short status timeout then gives up). */
    setDelay(ms: number) {
      delayMs = ms;
    },
    /** A subscription as Stripe holds it; later list calls answer it. */
    putSubscription(input: {
      id?: string;
      customer: string;
      status: string;
      plan: 'weekly' | 'annual';
      userId?: string;
      currentPeriodEnd?: number;
      cancelAtPeriodEnd?: boolean;
      cancelAt?: number | null;
      created?: number;
    }): StripeObject {
      const id = input.id ?? newId('sub');
      const created = input.created ?? now();
      const subscription = {
        id,
        object: 'subscription',
        created,
        customer: input.customer,
        status: input.status,
        cancel_at_period_end: input.cancelAtPeriodEnd ?? false,
        cancel_at: input.cancelAt ?? null,
        canceled_at: input.status === 'canceled' ? now() : null,
        metadata: { purpose: 'subscription', plan: input.plan, ...(input.userId ? { user_id: input.userId } : {}) },
        items: {
          object: 'list',
          data: [
            {
              id: newId('si'),
              object: 'subscription_item',
              current_period_start: created,
              current_period_end: input.currentPeriodEnd ?? created + (input.plan === 'weekly' ? 7 : 365) * 24 * 3600,
              price: { id: newId('price'), object: 'price', currency: 'usd', unit_amount: input.plan === 'weekly' ? 499 : 4999, recurring: { interval: input.plan === 'weekly' ? 'week' : 'year', interval_count: 1 } },
              quantity: 1,
            },
          ],
          has_more: false,
        },
        livemode: false,
      };
      subscriptions.set(id, subscription);
      return subscription;
    },
    /** The session as Stripe shows it once the customer paid (and, in subscription mode, its subscription). */
    completeSession(sessionId: string, subscriptionId?: string, paymentStatus: 'paid' | 'unpaid' = 'paid'): StripeObject {
      const session = sessions.get(sessionId);
      if (!session) throw new Error(`no checkout session ${sessionId}`);
      const completed = { ...session, status: 'complete', payment_status: paymentStatus, subscription: subscriptionId ?? null, payment_intent: session.mode === 'payment' ? newId('pi') : null };
      sessions.set(sessionId, completed);
      return completed;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A webhook event around `object`, as Stripe would deliver it. */
export function stripeEvent(type: string, object: StripeObject, options: { id?: string; created?: number } = {}) {
  return {
    id: options.id ?? newId('evt'),
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: options.created ?? now(),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

/** Delivers an event to the service, signed with the SDK's test-header helper (or the given header). */
export function deliverWebhook(baseUrl: string, event: unknown, secret: string, signature?: string): Promise<Response> {
  const payload = JSON.stringify(event);
  const header = signature ?? Stripe.webhooks.generateTestHeaderString({ payload, secret });
  return fetch(`${baseUrl}/webhooks/stripe`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Stripe-Signature': header },
    body: payload,
  });
}

function stripeError(status: number, message: string, param?: string) {
  return { status, body: { error: { type: 'invalid_request_error', message, ...(param ? { param } : {}) } } };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Stripe's form encoding: `a[b][0][c]=x` becomes { a: { b: [{ c: 'x' }] } }. */
function parseForm(encoded: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  if (!encoded) return root;
  for (const pair of encoded.split('&')) {
    const [rawKey = '', rawValue = ''] = pair.split('=');
    const key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
    const value = decodeURIComponent(rawValue.replace(/\+/g, ' '));
    const path = key.split('[').map((part) => part.replace(/\]$/, ''));
    let node: Record<string, unknown> | unknown[] = root;
    path.forEach((part, index) => {
      const last = index === path.length - 1;
      const container = node as Record<string, unknown>;
      if (last) {
        container[part] = value;
        return;
      }
      const nextIsIndex = /^\d+$/.test(path[index + 1] ?? '');
      container[part] ??= nextIsIndex ? [] : {};
      node = container[part] as Record<string, unknown> | unknown[];
    });
  }
  return root;
}
