import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { rerenderWorkflowId } from '@petsing/workflows';
import { connectTemporalClient } from '@petsing/platform/runtime';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadControlPlaneConfig } from '../src/config/env.ts';
import { createLogger } from '../src/logging/logger.ts';
import { StripeGateway } from '../src/payments/stripe-gateway.ts';
import { CreditRepository } from '../src/repositories/credit.repository.ts';
import { PaymentRepository } from '../src/repositories/payment.repository.ts';
import { VideoRepository } from '../src/repositories/video.repository.ts';
import { BillingService } from '../src/services/billing.service.ts';
import type { RenderScheduler } from '../src/temporal/render-scheduler.ts';
import { deliverWebhook, startFakeStripe, stripeEvent, type FakeStripe } from '../../test/support/fake-stripe.ts';
import { json, type Json } from '../../test/support/http.ts';
import { signInWebUser } from '../../test/support/accounts.ts';
import { captureLines } from '../../test/support/log-capture.ts';
import { insertWebVideo } from '../../test/support/web-video-row.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';

const SECRET_KEY = 'sk_test_petsing_payments';
const WEBHOOK_SECRET = 'whsec_test_petsing_payments';

describe('payments with Stripe (the real SDK against a local Stripe, real Postgres and Temporal)', () => {
  let stripe: FakeStripe;
  let service: TestService;
  let temporal: { client: Client; close(): Promise<void> };

  const db = () => service.database.db;
  const url = (path: string) => `${service.baseUrl}${path}`;
  const signIn = (email: string) => signInWebUser(service, email);
  const call = (method: 'GET' | 'POST', path: string, token?: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(url(path), {
      method,
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const userRow = (id: string) => db().selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const deliver = (event: unknown, signature?: string) => deliverWebhook(service.baseUrl, event, WEBHOOK_SECRET, signature);
  const eventCount = async () => Number((await db().selectFrom('payment_events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  /** A finished web video, watermarked unless said otherwise (inserted directly: no render is needed). */
  const webVideo = (userId: string, values: Parameters<typeof insertWebVideo>[2] = {}) => insertWebVideo(db(), userId, values);
  const checkoutRequests = () => stripe.requests.filter((request) => request.path === '/v1/checkout/sessions');
  const describeRerender = (videoId: string) => temporal.client.workflow.getHandle(rerenderWorkflowId(videoId)).describe();

  beforeAll(async () => {
    stripe = await startFakeStripe();
    service = await startTestService({
      temporal: true,
      env: { STRIPE_SECRET_KEY: SECRET_KEY, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: stripe.apiBase, STRIPE_STATUS_TIMEOUT_MS: '500', SITE_URL: 'https://petsing.example' },
    });
    temporal = await connectTemporalClient({ ...service.context.config.env });
  });
  afterAll(async () => {
    await temporal?.close();
    await service?.stop();
    await stripe?.close();
  });

  describe('GET /subscription/pricing', () => {
    const pricing = (country?: string) => json(fetch(url('/subscription/pricing'), { headers: country === undefined ? {} : { 'CF-IPCountry': country } }));

    it('answers USD without a country, for an unknown one and for a malformed one', async () => {
      for (const [header, country] of [[undefined, null], ['XX', 'XX'], ['T1', null], ['Narnia', null]] as const) {
        const body = await pricing(header);
        expect(body).toEqual({
          country,
          currency: 'USD',
          currency_exponent: 2,
          plans: [
            { plan_type: 'weekly', interval: 'week', amount: 499, formatted: '$4.99' },
            { plan_type: 'annual', interval: 'year', amount: 4999, formatted: '$49.99' },
          ],
          watermark_removal: { amount: 199, formatted: '$1.99' },
          payments_available: true,
        });
      }
    });

    it("prices in the country's currency, zero-decimal JPY and KRW in whole units", async () => {
      expect(await pricing('jp')).toMatchObject({
        country: 'JP',
        currency: 'JPY',
        currency_exponent: 0,
        plans: [
          { plan_type: 'weekly', amount: 750, formatted: '¥750' },
          { plan_type: 'annual', amount: 7500, formatted: '¥7,500' },
        ],
      });
      expect(await pricing('KR')).toMatchObject({ currency: 'KRW', currency_exponent: 0, plans: [{ amount: 6900, formatted: '₩6,900' }, { amount: 69000 }] });
      expect(await pricing('DE')).toMatchObject({ currency: 'EUR', plans: [{ amount: 499, formatted: '€4.99' }, { amount: 4999 }] });
      expect(await pricing('GB')).toMatchObject({ currency: 'GBP', watermark_removal: { amount: 179, formatted: '£1.79' } });
      const response = await fetch(url('/subscription/pricing'), { headers: { 'CF-IPCountry': 'IN' } });
      expect(response.headers.get('vary')).toMatch(/CF-IPCountry/i);
      expect(await response.json()).toMatchObject({ currency: 'INR', currency_exponent: 2, plans: [{ amount: 39900, formatted: '₹399.00' }, { amount: 399900 }] });
    });
  });

  describe('subscriptions', () => {
    it('refuses a missing credential, a missing plan and an unknown plan', async () => {
      const { token } = await signIn('plans-refused@example.com');
      const sessionsBefore = checkoutRequests().length;
      expect((await call('POST', '/subscription/create-checkout-session', undefined, { plan_type: 'weekly' })).status).toBe(401);
      const missing = await call('POST', '/subscription/create-checkout-session', token, {});
      expect(missing.status).toBe(400);
      expect((await json(missing)).error.code).toBe('invalid_request');
      const unknown = await call('POST', '/subscription/create-checkout-session', token, { plan_type: 'monthly' });
      expect(unknown.status).toBe(400);
      expect((await json(unknown)).error.code).toBe('unknown_plan');
      expect(checkoutRequests()).toHaveLength(sessionsBefore);
    });

    it("opens a Checkout in subscription mode in the caller's currency, with one Stripe customer per user", async () => {
      const { token, id } = await signIn('subscriber@example.com');
      const customersBefore = stripe.customers.size;
      const response = await call('POST', '/subscription/create-checkout-session', token, { plan_type: 'weekly' }, { 'CF-IPCountry': 'JP' });
      expect(response.status).toBe(200);
      const body = await json(response);
      expect(body).toEqual({ url: expect.stringMatching(/^https:\/\/checkout\.stripe\.test\//), rerendering: false, session_id: expect.stringMatching(/^cs_test_/) });

      const customerId = (await userRow(id)).payment_customer_id;
      expect(customerId).toMatch(/^cus_test_/);
      expect(stripe.customers.size).toBe(customersBefore + 1);
      const created = stripe.requests.find((request) => request.path === '/v1/customers' && (request.body.metadata as Json)?.user_id === id)!;
      expect(created).toMatchObject({ idempotencyKey: `customer:${id}`, authorization: `Bearer ${SECRET_KEY}`, body: { email: 'subscriber@example.com' } });

      const session = checkoutRequests().at(-1)!;
      expect(session.idempotencyKey).toMatch(new RegExp(`^checkout:${id}:`));
      expect(session.body).toMatchObject({
        mode: 'subscription',
        customer: customerId,
        client_reference_id: id,
        metadata: { user_id: id, purpose: 'subscription', plan: 'weekly' },
        subscription_data: { metadata: { user_id: id, purpose: 'subscription', plan: 'weekly' } },
        line_items: [{ quantity: '1', price_data: { currency: 'jpy', unit_amount: '750', recurring: { interval: 'week' }, product_data: { name: expect.any(String) } } }],
        success_url: 'https://petsing.example/checkout/success?session_id={CHECKOUT_SESSION_ID}',
        cancel_url: 'https://petsing.example/checkout/cancel',
      });

      const annual = await json(call('POST', '/subscription/create-checkout-session', token, { plan_type: 'annual' }));
      expect(annual.url).toEqual(expect.any(String));
      expect(stripe.customers.size).toBe(customersBefore + 1);
      expect(checkoutRequests().at(-1)!.body).toMatchObject({ customer: customerId, line_items: [{ price_data: { currency: 'usd', unit_amount: '4999', recurring: { interval: 'year' } } }] });
      expect(stripe.writes().every((request) => typeof request.idempotencyKey === 'string' && request.idempotencyKey.length > 0)).toBe(true);
    });

    it('creates the Stripe customer once when first purchases race', async () => {
      const { token, id } = await signIn('racer@example.com');
      const answers = await Promise.all(['weekly', 'annual', 'weekly'].map((plan) => call('POST', '/subscription/create-checkout-session', token, { plan_type: plan })));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
      const customerId = (await userRow(id)).payment_customer_id;
      const sessionCustomers = checkoutRequests().slice(-3).map((request) => request.body.customer);
      expect(sessionCustomers).toEqual([customerId, customerId, customerId]);
      expect([...stripe.customers.values()].filter((customer) => (customer.metadata as Json).user_id === id)).toHaveLength(1);
    });

    it('follows Stripe through checkout, cancellation at period end and deletion, whatever order the events arrive in', async () => {
      const { token, id } = await signIn('lifecycle@example.com');
      const { session_id: sessionId } = await json(call('POST', '/subscription/create-checkout-session', token, { plan_type: 'weekly' }));
      const customer = (await userRow(id)).payment_customer_id!;
      const t0 = Math.floor(Date.now() / 1000);
      const periodEnd = t0 + 7 * 24 * 3600;
      const subscription = stripe.putSubscription({ customer, status: 'active', plan: 'weekly', userId: id, currentPeriodEnd: periodEnd, created: t0 });

      const completed = stripeEvent('checkout.session.completed', stripe.completeSession(sessionId, subscription.id), { created: t0 });
      const first = await deliver(completed);
      expect(first.status).toBe(200);
      expect(await json(first)).toEqual({ received: true, duplicate: false });
      expect(await userRow(id)).toMatchObject({ subscription_status: 'active', subscription_id: subscription.id, subscription_plan: 'weekly', subscription_cancel_at_period_end: false });
      expect((await json(call('GET', '/user/me', token))).subscribed).toBe(true);

      // Replayed: acknowledged, nothing changes.
      const before = await userRow(id);
      const events = await eventCount();
      expect(await json(deliver(completed))).toEqual({ received: true, duplicate: true });
      expect(await userRow(id)).toEqual(before);
      expect(await eventCount()).toBe(events);

      // The user cancels at period end (t0+20); an older update (t0+10) arrives after it and is ignored.
      const cancelAtEnd = stripeEvent('customer.subscription.updated', { ...subscription, cancel_at_period_end: true }, { created: t0 + 20 });
      const olderUpdate = stripeEvent('customer.subscription.updated', { ...subscription, cancel_at_period_end: false, status: 'past_due' }, { created: t0 + 10 });
      expect((await deliver(cancelAtEnd)).status).toBe(200);
      expect((await deliver(olderUpdate)).status).toBe(200);
      expect(await userRow(id)).toMatchObject({
        subscription_status: 'active',
        subscription_cancel_at_period_end: true,
        subscription_current_period_end: new Date(periodEnd * 1000),
        subscription_updated_at: new Date((t0 + 20) * 1000),
      });
      const status = await json(call('GET', '/subscription/status', token));
      expect(status).toMatchObject({ subscribed: true, subscription: { status: 'active', plan: 'weekly', cancel_at_period_end: true, current_period_end: new Date(periodEnd * 1000).toISOString() } });

      // The period ends: deleted (t0+40). A late update (t0+30) and even a later one (t0+50) cannot revive it.
      const deleted = stripeEvent('customer.subscription.deleted', { ...subscription, status: 'canceled', cancel_at_period_end: true }, { created: t0 + 40 });
      expect((await deliver(deleted)).status).toBe(200);
      for (const late of [
        stripeEvent('customer.subscription.updated', { ...subscription, status: 'active' }, { created: t0 + 30 }),
        stripeEvent('customer.subscription.updated', { ...subscription, status: 'active' }, { created: t0 + 50 }),
        stripeEvent('checkout.session.completed', stripe.completeSession(sessionId, subscription.id), { created: t0 + 60 }),
      ]) {
        expect((await deliver(late)).status).toBe(200);
      }
      expect(await userRow(id)).toMatchObject({ subscription_status: 'canceled', subscription_id: subscription.id });
      expect((await json(call('GET', '/user/me', token))).subscribed).toBe(false);

      // Subscribing again starts a new subscription, which replaces the canceled one.
      const renewed = stripe.putSubscription({ customer, status: 'active', plan: 'annual', userId: id, created: t0 + 70 });
      expect((await deliver(stripeEvent('customer.subscription.created', renewed, { created: t0 + 70 }))).status).toBe(200);
      expect(await userRow(id)).toMatchObject({ subscription_status: 'active', subscription_id: renewed.id, subscription_plan: 'annual', subscription_cancel_at_period_end: false });
    });

    it('records a deletion that arrives before the subscription it ends, and never revives it', async () => {
      const { token, id } = await signIn('early-delete@example.com');
      const { session_id: sessionId } = await json(call('POST', '/subscription/create-checkout-session', token, { plan_type: 'annual' }));
      const customer = (await userRow(id)).payment_customer_id!;
      const t0 = Math.floor(Date.now() / 1000);
      const subscription = stripe.putSubscription({ customer, status: 'active', plan: 'annual', created: t0 });
      await deliver(stripeEvent('customer.subscription.deleted', { ...subscription, status: 'canceled' }, { created: t0 + 5 }));
      await deliver(stripeEvent('checkout.session.completed', stripe.completeSession(sessionId, subscription.id), { created: t0 }));
      await deliver(stripeEvent('customer.subscription.created', subscription, { created: t0 }));
      expect(await userRow(id)).toMatchObject({ subscription_status: 'canceled', subscription_id: subscription.id });
    });

    it('moves to past_due when an invoice payment fails, unless Stripe already reported a newer state', async () => {
      const { token, id } = await signIn('dunning@example.com');
      await call('POST', '/subscription/create-checkout-session', token, { plan_type: 'weekly' });
      const customer = (await userRow(id)).payment_customer_id!;
      const t0 = Math.floor(Date.now() / 1000);
      const subscription = stripe.putSubscription({ customer, status: 'active', plan: 'weekly', created: t0 });
      await deliver(stripeEvent('customer.subscription.created', subscription, { created: t0 }));
      const invoice = (created: number) =>
        stripeEvent('invoice.payment_failed', {
          id: `in_test_${created}`,
          object: 'invoice',
          customer,
          status: 'open',
          parent: { type: 'subscription_details', subscription_details: { subscription: subscription.id, metadata: {} } },
        }, { created });

      expect((await deliver(invoice(t0 + 10))).status).toBe(200);
      expect((await userRow(id)).subscription_status).toBe('past_due');
      expect((await json(call('GET', '/user/me', token))).subscribed).toBe(false);

      // The retry succeeded (t0+30); a failure of an earlier attempt (t0+20) delivered late changes nothing.
      await deliver(stripeEvent('customer.subscription.updated', subscription, { created: t0 + 30 }));
      expect((await deliver(invoice(t0 + 20))).status).toBe(200);
      expect((await userRow(id)).subscription_status).toBe('active');
    });

    it('refuses a second subscription while one is billed', async () => {
      const { token, id } = await signIn('double@example.com');
      await call('POST', '/subscription/create-checkout-session', token, { plan_type: 'weekly' });
      const customer = (await userRow(id)).payment_customer_id!;
      const subscription = stripe.putSubscription({ customer, status: 'trialing', plan: 'weekly' });
      await deliver(stripeEvent('customer.subscription.created', subscription));
      const sessionsBefore = checkoutRequests().length;
      for (const status of ['trialing', 'past_due']) {
        await deliver(stripeEvent('customer.subscription.updated', { ...subscription, status }));
        const again = await call('POST', '/subscription/create-checkout-session', token, { plan_type: 'annual' });
        expect(again.status).toBe(409);
        expect((await json(again)).error.code).toBe('conflict');
      }
      expect(checkoutRequests()).toHaveLength(sessionsBefore);
    });

    it('uses the configured Stripe Price of a plan instead of an inline price', async () => {
      const { id } = await signIn('price-ids@example.com');
      const { context } = service;
      const billing = new BillingService({
        payments: new PaymentRepository(context.database.db, new CreditRepository(context.database.db)),
        videos: new VideoRepository(context.database.db),
        scheduler: context.services.scheduler,
        gateway: new StripeGateway({ ...context.config.stripe!, prices: { weekly: 'price_weekly_configured', annual: undefined } }, context.logger),
        settings: { siteUrl: context.config.siteUrl, statusTimeoutMs: 500 },
        logger: context.logger,
      });
      await billing.subscriptionCheckout(await userRow(id), 'weekly', 'JP');
      expect(checkoutRequests().at(-1)!.body.line_items).toEqual([{ price: 'price_weekly_configured', quantity: '1' }]);
      await billing.subscriptionCheckout(await userRow(id), 'annual', 'JP');
      expect(checkoutRequests().at(-1)!.body.line_items).toEqual([
        { price_data: { currency: 'jpy', unit_amount: '7500', recurring: { interval: 'year' }, product_data: { name: 'petsing annual plan' } }, quantity: '1' },
      ]);
    });

    it('answers 503 in the error shape when Stripe refuses a request', async () => {
      const { token, id } = await signIn('stripe-refuses@example.com');
      await db().updateTable('users').set({ payment_customer_id: 'cus_test_deleted_in_dashboard' }).where('id', '=', id).execute();
      const response = await call('POST', '/subscription/create-portal-session', token);
      expect(response.status).toBe(503);
      expect((await json(response)).error).toMatchObject({ code: 'service_unavailable', message: expect.stringContaining('payment provider') });
    });
  });

  describe('GET /subscription/status', () => {
    it('reads the database for a user Stripe does not know yet', async () => {
      const { token } = await signIn('no-customer@example.com');
      expect(await json(call('GET', '/subscription/status', token))).toEqual({
        subscribed: false,
        subscription: { status: 'none', plan: null, current_period_end: null, cancel_at_period_end: false },
        source: 'database',
      });
      expect((await call('GET', '/subscription/status')).status).toBe(401);
    });

    it("catches up from Stripe when a webhook was missed, and falls back to the database when Stripe is slow", async () => {
      const { token, id } = await signIn('missed-webhook@example.com');
      await call('POST', '/subscription/create-checkout-session', token, { plan_type: 'annual' });
      const customer = (await userRow(id)).payment_customer_id!;
      const periodEnd = Math.floor(Date.now() / 1000) + 365 * 24 * 3600;
      stripe.putSubscription({ customer, status: 'active', plan: 'annual', currentPeriodEnd: periodEnd, cancelAt: periodEnd });
      expect((await userRow(id)).subscription_status).toBe('none');

      stripe.setDelay(1_500);
      try {
        const started = Date.now();
        expect(await json(call('GET', '/subscription/status', token))).toMatchObject({ subscribed: false, subscription: { status: 'none' }, source: 'database' });
        expect(Date.now() - started).toBeLessThan(1_400);
      } finally {
        stripe.setDelay(0);
      }

      expect(await json(call('GET', '/subscription/status', token))).toEqual({
        subscribed: true,
        subscription: { status: 'active', plan: 'annual', current_period_end: new Date(periodEnd * 1000).toISOString(), cancel_at_period_end: true },
        source: 'payment_provider',
      });
      expect((await userRow(id)).subscription_status).toBe('active');
      const lookup = stripe.requests.filter((request) => request.path === '/v1/subscriptions').at(-1)!;
      expect(lookup).toMatchObject({ method: 'GET', query: { customer, status: 'all', limit: '1' } });
    });
  });

  describe('POST /subscription/create-portal-session', () => {
    it('answers 404 without a Stripe customer and the portal URL with one', async () => {
      const { token } = await signIn('portal@example.com');
      const none = await call('POST', '/subscription/create-portal-session', token, {});
      expect(none.status).toBe(404);
      expect((await json(none)).error.code).toBe('not_found');

      await call('POST', '/subscription/create-checkout-session', token, { plan_type: 'weekly' });
      const response = await call('POST', '/subscription/create-portal-session', token);
      expect(response.status).toBe(200);
      expect(await json(response)).toEqual({ url: expect.stringMatching(/^https:\/\/billing\.stripe\.test\/p\/session\//) });
      const request = stripe.requests.filter((entry) => entry.path === '/v1/billing_portal/sessions').at(-1)!;
      expect(request.body).toEqual({ customer: expect.stringMatching(/^cus_test_/), return_url: 'https://petsing.example/account' });
      expect(request.idempotencyKey).toMatch(/^portal:/);
      expect((await call('POST', '/subscription/create-portal-session')).status).toBe(401);
    });
  });

  describe('API credit packs', () => {
    it('lists the packs of the spec', async () => {
      const { token } = await signIn('packs@example.com');
      expect(await json(call('GET', '/credits/packs', token))).toEqual({
        currency: 'USD',
        packs: [
          { pack: 'starter', credits: 100, amount: 500, formatted: '$5.00' },
          { pack: 'growth', credits: 500, amount: 2000, formatted: '$20.00' },
          { pack: 'scale', credits: 2500, amount: 7500, formatted: '$75.00' },
        ],
        payments_available: true,
      });
    });

    it('refuses an unknown or missing pack', async () => {
      const { token } = await signIn('bad-pack@example.com');
      const unknown = await call('POST', '/credits/create-checkout-session', token, { pack: 'mega' });
      expect(unknown.status).toBe(400);
      expect((await json(unknown)).error.code).toBe('unknown_credit_pack');
      const missing = await call('POST', '/credits/create-checkout-session', token, {});
      expect(missing.status).toBe(400);
      expect((await json(missing)).error.code).toBe('invalid_request');
    });

    it('credits a paid pack to the ledger exactly once, even when Stripe delivers the event concurrently and again later', async () => {
      const { token, id } = await signIn('buyer@example.com');
      const response = await call('POST', '/credits/create-checkout-session', token, { pack: 'growth' }, { 'CF-IPCountry': 'JP' });
      expect(response.status).toBe(200);
      const { session_id: sessionId, url: checkoutUrl, rerendering } = await json(response);
      expect(checkoutUrl).toMatch(/^https:\/\/checkout\.stripe\.test\//);
      expect(rerendering).toBe(false);
      expect(checkoutRequests().at(-1)!.body).toMatchObject({
        mode: 'payment',
        metadata: { user_id: id, purpose: 'credit_pack', pack: 'growth' },
        line_items: [{ price_data: { currency: 'usd', unit_amount: '2000' } }],
      });
      expect(await db().selectFrom('purchases').selectAll().where('checkout_session_id', '=', sessionId).executeTakeFirstOrThrow()).toMatchObject({
        user_id: id, kind: 'credit_pack', pack: 'growth', credits: 500, amount: 2000, currency: 'usd', status: 'pending', paid_at: null, fulfilled_at: null,
      });

      const completed = stripeEvent('checkout.session.completed', stripe.completeSession(sessionId));
      const deliveries = await Promise.all(Array.from({ length: 6 }, () => deliver(completed)));
      expect(deliveries.map((delivery) => delivery.status)).toEqual([200, 200, 200, 200, 200, 200]);
      const answers: Json[] = await Promise.all(deliveries.map((delivery) => json(delivery)));
      expect(answers.filter((answer) => !answer.duplicate)).toHaveLength(1);

      // Another event about the same payment (async success after completion) must not credit it again.
      await deliver(stripeEvent('checkout.session.async_payment_succeeded', stripe.completeSession(sessionId)));
      await deliver(completed);

      const ledger = await db().selectFrom('credit_ledger').select(['delta', 'reason', 'idempotency_key']).where('user_id', '=', id).execute();
      expect(ledger).toEqual([{ delta: 500, reason: 'purchase', idempotency_key: sessionId }]);
      expect((await json(call('GET', '/user/me', token))).api_credit_balance).toBe(500);
      const purchase = await db().selectFrom('purchases').selectAll().where('checkout_session_id', '=', sessionId).executeTakeFirstOrThrow();
      expect(purchase.status).toBe('paid');
      expect(purchase.paid_at).toBeInstanceOf(Date);
      expect(purchase.fulfilled_at).toBeInstanceOf(Date);

      // The constraints hold even against a bug: a second credit for the same payment, or a paid purchase
      // without its payment time, is refused by the database.
      await expect(db().insertInto('credit_ledger').values({ user_id: id, delta: 500, reason: 'purchase', idempotency_key: sessionId }).execute()).rejects.toMatchObject({ code: '23505' });
      await expect(
        db().insertInto('purchases').values({ checkout_session_id: 'cs_test_constraint', user_id: id, kind: 'credit_pack', pack: 'starter', credits: 100, amount: 500, currency: 'usd', status: 'paid' }).execute(),
      ).rejects.toMatchObject({ code: '23514' });
      await expect(
        db().insertInto('purchases').values({ checkout_session_id: 'cs_test_constraint', user_id: id, kind: 'credit_pack', amount: 500, currency: 'usd' }).execute(),
      ).rejects.toMatchObject({ code: '23514' });
    });

    it('waits for the money of an asynchronous payment, and marks an abandoned checkout expired', async () => {
      const { token, id } = await signIn('async-buyer@example.com');
      const { session_id: sessionId } = await json(call('POST', '/credits/create-checkout-session', token, { pack: 'starter' }));
      await deliver(stripeEvent('checkout.session.completed', stripe.completeSession(sessionId, undefined, 'unpaid')));
      expect((await db().selectFrom('purchases').select('status').where('checkout_session_id', '=', sessionId).executeTakeFirstOrThrow()).status).toBe('pending');
      await deliver(stripeEvent('checkout.session.async_payment_succeeded', stripe.completeSession(sessionId)));
      expect((await db().selectFrom('credit_balances').select('balance').where('user_id', '=', id).executeTakeFirstOrThrow()).balance).toBe(100);

      const { session_id: abandoned } = await json(call('POST', '/credits/create-checkout-session', token, { pack: 'scale' }));
      await deliver(stripeEvent('checkout.session.expired', { ...stripe.sessions.get(abandoned)!, status: 'expired' }));
      expect((await db().selectFrom('purchases').select('status').where('checkout_session_id', '=', abandoned).executeTakeFirstOrThrow()).status).toBe('expired');
      expect((await db().selectFrom('credit_balances').select('balance').where('user_id', '=', id).executeTakeFirstOrThrow()).balance).toBe(100);
    });
  });

  describe('watermark removal', () => {
    it('answers the error rows: missing id, not the caller\'s, no watermark, not finished', async () => {
      const owner = await signIn('wm-owner@example.com');
      const other = await signIn('wm-other@example.com');
      const video = await webVideo(owner.id);
      const expectError = async (token: string, body: unknown, status: number, code: string) => {
        const response = await call('POST', '/subscription/create-one-time-checkout', token, body);
        expect(response.status).toBe(status);
        expect((await json(response)).error.code).toBe(code);
      };
      expect((await call('POST', '/subscription/create-one-time-checkout', undefined, { video_id: video })).status).toBe(401);
      await expectError(owner.token, {}, 400, 'invalid_request');
      await expectError(other.token, { video_id: video }, 404, 'not_found');
      await expectError(owner.token, { video_id: randomUUID() }, 404, 'not_found');
      await expectError(owner.token, { video_id: 'not-a-uuid' }, 404, 'not_found');
      await expectError(owner.token, { video_id: await webVideo(owner.id, { has_watermark: false }) }, 400, 'video_not_watermarked');
      await expectError(owner.token, { video_id: await webVideo(owner.id, { status: 'pending' }) }, 400, 'video_not_ready');
      expect(await db().selectFrom('purchases').selectAll().where('user_id', '=', owner.id).execute()).toEqual([]);
    });

    it('takes the payment once, starts the re-render, and restarts a failed re-render without charging again', async () => {
      const { token, id } = await signIn('wm-buyer@example.com');
      const videoId = await webVideo(id);
      const response = await call('POST', '/subscription/create-one-time-checkout', token, { video_id: videoId }, { 'CF-IPCountry': 'GB' });
      expect(response.status).toBe(200);
      const { session_id: sessionId, url: checkoutUrl, rerendering } = await json(response);
      expect({ checkoutUrl, rerendering }).toEqual({ checkoutUrl: expect.stringMatching(/^https:\/\/checkout\.stripe\.test\//), rerendering: false });
      expect(checkoutRequests().at(-1)!.body).toMatchObject({
        mode: 'payment',
        metadata: { user_id: id, purpose: 'watermark_removal', video_id: videoId },
        payment_intent_data: { metadata: { video_id: videoId } },
        line_items: [{ price_data: { currency: 'gbp', unit_amount: '179' } }],
      });

      const completed = stripeEvent('checkout.session.completed', stripe.completeSession(sessionId));
      expect(await json(deliver(completed))).toEqual({ received: true, duplicate: false });
      const purchase = await db().selectFrom('purchases').selectAll().where('checkout_session_id', '=', sessionId).executeTakeFirstOrThrow();
      expect(purchase).toMatchObject({ kind: 'watermark_removal', video_id: videoId, amount: 179, currency: 'gbp', status: 'paid' });
      expect(purchase.fulfilled_at).toBeInstanceOf(Date);
      const first = await describeRerender(videoId);
      expect(first.status.name).toBe('RUNNING');

      // A replay neither charges nor starts anything.
      expect(await json(deliver(completed))).toEqual({ received: true, duplicate: true });
      expect((await describeRerender(videoId)).runId).toBe(first.runId);

      // Asking again while it runs joins the running re-render.
      const sessionsBefore = checkoutRequests().length;
      expect(await json(call('POST', '/subscription/create-one-time-checkout', token, { video_id: videoId }))).toEqual({ url: null, rerendering: true, session_id: null });
      expect((await describeRerender(videoId)).runId).toBe(first.runId);

      // The re-render fails for good (what the workflow does after its last attempt): the video keeps its
      // watermarked output, and the paid purchase restarts it without a new checkout.
      await service.context.services.renders.beginRerender(videoId);
      await service.context.services.renders.abandonRerender(videoId, { code: 'render_failed', reason: 'The render failed after several attempts.' });
      await temporal.client.workflow.getHandle(rerenderWorkflowId(videoId)).terminate('simulated failure');
      expect(await db().selectFrom('videos').select(['status', 'has_watermark', 'failure_code']).where('id', '=', videoId).executeTakeFirstOrThrow()).toEqual({
        status: 'completed', has_watermark: true, failure_code: 'render_failed',
      });

      const restart = await call('POST', '/subscription/create-one-time-checkout', token, { video_id: videoId });
      expect(restart.status).toBe(200);
      expect(await json(restart)).toEqual({ url: null, rerendering: true, session_id: null });
      const second = await describeRerender(videoId);
      expect(second.status.name).toBe('RUNNING');
      expect(second.runId).not.toBe(first.runId);
      expect(checkoutRequests().length).toBe(sessionsBefore);
      expect(await db().selectFrom('purchases').select('status').where('video_id', '=', videoId).execute()).toEqual([{ status: 'paid' }]);
      await temporal.client.workflow.getHandle(rerenderWorkflowId(videoId)).terminate('test over');
    });

    it('keeps a paid purchase when the re-render cannot be queued, and starts it on Stripe\'s redelivery', async () => {
      const { token, id } = await signIn('wm-queue-down@example.com');
      const videoId = await webVideo(id);
      const { session_id: sessionId } = await json(call('POST', '/subscription/create-one-time-checkout', token, { video_id: videoId }));

      let queueUp = false;
      const started: string[] = [];
      const scheduler = {
        startRerender: async (video: string) => {
          if (!queueUp) throw new Error('temporal unreachable');
          started.push(video);
          return rerenderWorkflowId(video);
        },
      } as unknown as RenderScheduler;
      const { context } = service;
      const billing = new BillingService({
        payments: new PaymentRepository(context.database.db, new CreditRepository(context.database.db)),
        videos: new VideoRepository(context.database.db),
        scheduler,
        gateway: new StripeGateway(context.config.stripe!, context.logger),
        settings: { siteUrl: context.config.siteUrl, statusTimeoutMs: 500 },
        logger: context.logger,
      });
      const payload = JSON.stringify(stripeEvent('checkout.session.completed', stripe.completeSession(sessionId)));
      const signature = () => Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });

      await expect(billing.handleWebhook(Buffer.from(payload), signature())).rejects.toMatchObject({ code: 'service_unavailable' });
      const paid = await db().selectFrom('purchases').selectAll().where('checkout_session_id', '=', sessionId).executeTakeFirstOrThrow();
      expect(paid.status).toBe('paid');
      expect(paid.fulfilled_at).toBeNull();

      queueUp = true;
      expect(await billing.handleWebhook(Buffer.from(payload), signature())).toEqual({ duplicate: true });
      expect(started).toEqual([videoId]);
      expect((await db().selectFrom('purchases').select('fulfilled_at').where('checkout_session_id', '=', sessionId).executeTakeFirstOrThrow()).fulfilled_at).toBeInstanceOf(Date);
      expect(await billing.handleWebhook(Buffer.from(payload), signature())).toEqual({ duplicate: true });
      expect(started).toEqual([videoId]);
    });
  });

  describe('POST /webhooks/stripe signature', () => {
    it('refuses a missing, wrong or stale signature and a tampered body, changing nothing', async () => {
      const { token, id } = await signIn('forger@example.com');
      const { session_id: sessionId } = await json(call('POST', '/credits/create-checkout-session', token, { pack: 'scale' }));
      const event = stripeEvent('checkout.session.completed', stripe.completeSession(sessionId));
      const payload = JSON.stringify(event);
      const events = await eventCount();
      const attempts = [
        fetch(url('/webhooks/stripe'), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: payload }),
        deliver(event, Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_someone_else' })),
        deliver(event, Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp: Math.floor(Date.now() / 1000) - 3600 })),
        deliver({ ...event, id: 'evt_tampered' }, Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET })),
        deliver(event, 'garbage'),
      ];
      for (const response of await Promise.all(attempts)) {
        expect(response.status).toBe(400);
        expect((await json(response)).error.code).toBe('webhook_signature_invalid');
      }
      expect(await eventCount()).toBe(events);
      expect(await db().selectFrom('credit_ledger').selectAll().where('user_id', '=', id).execute()).toEqual([]);
      expect((await db().selectFrom('purchases').select('status').where('checkout_session_id', '=', sessionId).executeTakeFirstOrThrow()).status).toBe('pending');
    });
  });
});

describe('payments without Stripe configured (the embedded default)', () => {
  let service: TestService;
  let token: string;
  const url = (path: string) => `${service.baseUrl}${path}`;
  const log = captureLines();

  beforeAll(async () => {
    service = await startTestService({ env: { COUNTRY_HEADER: 'X-Edge-Country' }, logger: createLogger('warn', 'petsing', log.sink) });
    ({ token } = await signInWebUser(service, 'unconfigured@example.com'));
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('refuses to start with only one of the two Stripe keys', () => {
    expect(() => loadControlPlaneConfig({ STRIPE_SECRET_KEY: SECRET_KEY })).toThrow(ConfigError);
    expect(() => loadControlPlaneConfig({ STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET })).toThrow(/STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET/);
    expect(loadControlPlaneConfig({}).stripe).toBeUndefined();
  });

  it('still answers pricing, from the configured country header, saying that nothing can be bought', async () => {
    expect(await json(fetch(url('/subscription/pricing'), { headers: { 'X-Edge-Country': 'KR' } }))).toMatchObject({ country: 'KR', currency: 'KRW', plans: [{ amount: 6900 }, { amount: 69000 }], payments_available: false });
    expect(await json(fetch(url('/subscription/pricing'), { headers: { 'CF-IPCountry': 'JP' } }))).toMatchObject({ country: null, currency: 'USD', payments_available: false });
    expect(await json(fetch(url('/credits/packs'), { headers: { Authorization: `Bearer ${token}` } }))).toMatchObject({ currency: 'USD', payments_available: false });
  });

  it('answers 503 payments_not_configured on checkout, portal and webhook endpoints in plain words; the variables are named in the log only', async () => {
    const auth = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    const responses = await Promise.all([
      fetch(url('/subscription/create-checkout-session'), { method: 'POST', headers: auth, body: JSON.stringify({ plan_type: 'weekly' }) }),
      fetch(url('/subscription/create-one-time-checkout'), { method: 'POST', headers: auth, body: JSON.stringify({ video_id: randomUUID() }) }),
      fetch(url('/subscription/create-portal-session'), { method: 'POST', headers: auth }),
      fetch(url('/credits/create-checkout-session'), { method: 'POST', headers: auth, body: JSON.stringify({ pack: 'starter' }) }),
      deliverWebhook(service.baseUrl, stripeEvent('checkout.session.completed', { id: 'cs_test_x' }), WEBHOOK_SECRET),
    ]);
    for (const response of responses) {
      expect(response.status).toBe(503);
      const body = await json(response);
      expect(body.error.code).toBe('payments_not_configured');
      expect(body.error.message).toBe('Payments are not available on this service.');
      // What an end user reads (the web app shows message and hint) names no setting of the operator's.
      expect(`${body.message} ${body.error.message} ${body.error.hint}`).not.toMatch(/STRIPE|operator|configur/i);
    }
    const refusals = log.lines.map((line) => JSON.parse(line) as { level: number; code?: string; msg: string }).filter((line) => line.code === 'payments_not_configured');
    expect(refusals).toHaveLength(responses.length);
    for (const line of refusals) expect(line.msg).toMatch(/STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET/);
    expect(await json(fetch(url('/subscription/status'), { headers: auth }))).toMatchObject({ subscribed: false, source: 'database' });
  });
});
