import express, { Router } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../runtime/app-context.ts';
import { errorResponses, jsonResponse, type OpenAPIRegistry } from '../openapi.ts';
import { WebhookAck } from '../schemas/subscription.schemas.ts';

const WEBHOOK_BODY_LIMIT = '1mb';

/**
 * POST /webhooks/stripe. The signature covers the exact bytes Stripe sent, so this router reads the raw
 * body itself and must be mounted before the JSON body parser.
 */
export function stripeWebhookRoutes(context: AppContext): Router {
  const router = Router();
  router.post('/webhooks/stripe', express.raw({ type: 'application/json', limit: WEBHOOK_BODY_LIMIT }), async (req, res) => {
    const body: unknown = req.body;
    const { duplicate } = await context.services.billing.handleWebhook(Buffer.isBuffer(body) ? body : Buffer.alloc(0), req.get('stripe-signature'));
    res.json({ received: true, duplicate });
  });
  return router;
}

const StripeEvent = z
  .object({ id: z.string(), type: z.string(), created: z.number().int(), data: z.object({ object: z.object({}).loose() }) })
  .loose()
  .meta({ id: 'StripeEvent', description: 'A Stripe event, exactly as Stripe sends it.' });

export function registerStripeWebhookPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post', path: '/webhooks/stripe', security: [], tags: ['web-app'], operationId: 'receiveStripeEvent', summary: 'Stripe webhook endpoint',
    description: 'Called by Stripe, not by clients. The Stripe-Signature header is verified over the raw body with STRIPE_WEBHOOK_SECRET; '
      + 'each event id is applied once (a redelivered event changes nothing), and subscription changes follow the time Stripe created them, '
      + 'not the order they arrive in.',
    request: {
      headers: z.object({ 'stripe-signature': z.string().meta({ description: 'Signature Stripe computed over the raw body.' }) }),
      body: { required: true, content: { 'application/json': { schema: StripeEvent } } },
    },
    responses: {
      200: jsonResponse('The event was applied, or had been before.', WebhookAck),
      ...errorResponses('webhook_signature_invalid', 'payments_not_configured', 'service_unavailable'),
    },
  });
}
