import { Router, type Request } from 'express';
import type { AppContext } from '../../runtime/app-context.ts';
import type { CheckoutAnswer } from '../../services/billing.service.ts';
import { requireWebUser, webUserOf } from '../middleware/web-auth.ts';
import { errorResponses, jsonResponse, type OpenAPIRegistry } from '../openapi.ts';
import {
  CheckoutSession,
  CreateCheckoutSessionRequest,
  CreateCreditCheckoutRequest,
  CreateOneTimeCheckoutRequest,
  CreditPackList,
  PortalSession,
  Pricing,
  SubscriptionStatusRecord,
} from '../schemas/subscription.schemas.ts';
import { parseBody } from '../validation.ts';
import { creditPackListRepresentation, pricingRepresentation, subscriptionStatusRepresentation } from '../../presenters/web.presenter.ts';
import { idTokenSecurity } from './web-app.routes.ts';

/** Plans, checkout, the billing portal and API credit packs (Stripe), for the signed-in web user. */
export function subscriptionRoutes(context: AppContext): Router {
  const router = Router();
  const signedIn = requireWebUser(context.services.identity);
  const { billing } = context.services;
  const countryHeader = context.config.env.COUNTRY_HEADER;
  const countryOf = (req: Request) => req.get(countryHeader);

  router.get('/subscription/pricing', (req, res) => {
    const pricing = billing.pricing(countryOf(req));
    res.set({ 'Cache-Control': 'public, max-age=3600', Vary: countryHeader });
    res.json(pricingRepresentation(pricing, billing.paymentsAvailable()));
  });

  router.get('/subscription/status', signedIn, async (_req, res) => {
    const status = await billing.subscriptionStatus(webUserOf(res));
    res.set('Cache-Control', 'no-store');
    res.json(subscriptionStatusRepresentation(status));
  });

  router.post('/subscription/create-checkout-session', signedIn, async (req, res) => {
    const { plan_type } = parseBody(CreateCheckoutSessionRequest, req);
    res.json(checkoutSession(await billing.subscriptionCheckout(webUserOf(res), plan_type, countryOf(req))));
  });

  router.post('/subscription/create-one-time-checkout', signedIn, async (req, res) => {
    const { video_id } = parseBody(CreateOneTimeCheckoutRequest, req);
    res.json(checkoutSession(await billing.watermarkRemovalCheckout(webUserOf(res), video_id, countryOf(req))));
  });

  router.post('/subscription/create-portal-session', signedIn, async (_req, res) => {
    res.json({ url: await billing.portalSession(webUserOf(res)) });
  });

  router.get('/credits/packs', signedIn, (_req, res) => {
    res.json(creditPackListRepresentation(billing.creditPacks(), billing.paymentsAvailable()));
  });

  router.post('/credits/create-checkout-session', signedIn, async (req, res) => {
    const { pack } = parseBody(CreateCreditCheckoutRequest, req);
    res.json(checkoutSession(await billing.creditPackCheckout(webUserOf(res), pack)));
  });

  return router;
}

const checkoutSession = (answer: CheckoutAnswer) => ({ url: answer.url, rerendering: answer.rerendering, session_id: answer.sessionId });

export function registerSubscriptionPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get', path: '/subscription/pricing', security: [], tags: ['web-app'], operationId: 'getPricing', summary: "Plan prices in the caller's currency",
    description: 'The currency follows the country in the edge header (CF-IPCountry unless the operator configured COUNTRY_HEADER); '
      + 'an unknown or missing country gets USD. Amounts are in minor units (cents; whole yen and won for the zero-decimal JPY and KRW).',
    responses: { 200: jsonResponse('Weekly and annual plan prices, the watermark removal price, and whether they can be bought here.', Pricing) },
  });
  registry.registerPath({
    method: 'get', path: '/subscription/status', security: idTokenSecurity, tags: ['web-app'], operationId: 'getSubscriptionStatus', summary: 'The subscription state',
    description: 'Refreshed from Stripe when it answers within STRIPE_STATUS_TIMEOUT_MS, otherwise read from the database (see `source`).',
    responses: { 200: jsonResponse('The current subscription state.', SubscriptionStatusRecord), ...errorResponses('unauthorized') },
  });
  registry.registerPath({
    method: 'post', path: '/subscription/create-checkout-session', security: idTokenSecurity, tags: ['web-app'], operationId: 'createSubscriptionCheckout',
    summary: 'Start a Stripe Checkout for the weekly or annual plan',
    description: "Priced in the caller's currency (as GET /subscription/pricing). The plan starts when Stripe reports the payment (webhook). 409 while a subscription is active, trialing, past due or unpaid: use the billing portal.",
    request: { body: { required: true, content: { 'application/json': { schema: CreateCheckoutSessionRequest } } } },
    responses: { 200: jsonResponse('Where to send the caller (`url`).', CheckoutSession), ...errorResponses('unknown_plan', 'invalid_request', 'unauthorized', 'conflict', 'payments_not_configured', 'service_unavailable') },
  });
  registry.registerPath({
    method: 'post', path: '/subscription/create-one-time-checkout', security: idTokenSecurity, tags: ['web-app'], operationId: 'createWatermarkRemovalCheckout',
    summary: "Buy the removal of a video's watermark",
    description: 'A one-time payment; once paid, the video is re-rendered without the watermark. If the video was already paid for, nothing is charged: '
      + 'its re-render (re)starts and the answer is `url: null, rerendering: true` (this also recovers a re-render that failed).',
    request: { body: { required: true, content: { 'application/json': { schema: CreateOneTimeCheckoutRequest } } } },
    responses: {
      200: jsonResponse('Where to send the caller, or that the re-render restarted.', CheckoutSession),
      ...errorResponses('invalid_request', 'video_not_watermarked', 'video_not_ready', 'unauthorized', 'not_found', 'payments_not_configured', 'service_unavailable'),
    },
  });
  registry.registerPath({
    method: 'post', path: '/subscription/create-portal-session', security: idTokenSecurity, tags: ['web-app'], operationId: 'createBillingPortalSession',
    summary: 'Open the Stripe billing portal',
    description: 'Where the caller changes or cancels the plan. Any request body is ignored.',
    responses: { 200: jsonResponse('The portal URL.', PortalSession), ...errorResponses('unauthorized', 'not_found', 'payments_not_configured', 'service_unavailable') },
  });
  registry.registerPath({
    method: 'get', path: '/credits/packs', security: idTokenSecurity, tags: ['web-app'], operationId: 'listCreditPacks', summary: 'API credit packs for sale',
    responses: { 200: jsonResponse('The packs and their USD prices.', CreditPackList), ...errorResponses('unauthorized') },
  });
  registry.registerPath({
    method: 'post', path: '/credits/create-checkout-session', security: idTokenSecurity, tags: ['web-app'], operationId: 'createCreditPackCheckout',
    summary: 'Buy a pack of API credits',
    description: 'A one-time Stripe Checkout payment in USD; the credits are added to the API balance (ledger reason `purchase`) when Stripe reports the payment.',
    request: { body: { required: true, content: { 'application/json': { schema: CreateCreditCheckoutRequest } } } },
    responses: { 200: jsonResponse('Where to send the caller (`url`).', CheckoutSession), ...errorResponses('unknown_credit_pack', 'invalid_request', 'unauthorized', 'payments_not_configured', 'service_unavailable') },
  });
}
