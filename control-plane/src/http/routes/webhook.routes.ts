import { Router, type Request } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../runtime/app-context.ts';
import { deliveryListRepresentation, deliveryRepresentation, endpointRepresentation } from '../../presenters/webhook.presenter.ts';
import { credentialOf, requireScope } from '../middleware/api-auth.ts';
import { credentialSecurity, errorResponses, jsonResponse, type OpenAPIRegistry } from '../openapi.ts';
import {
  CreateWebhookRequest,
  CreatedWebhookEndpoint,
  DefaultWebhookSecret,
  DeliveryListQuery,
  DeliveryPath,
  RotateSecretRequest,
  TestEventPayload,
  VideoEventPayload,
  WebhookDelivery as WebhookDeliverySchema,
  WebhookDeliveryList,
  WebhookEndpoint as WebhookEndpointSchema,
  WebhookEndpointList,
  WebhookIdPath,
} from '../schemas/webhook.schemas.ts';
import { VideoIdPath } from '../schemas/public-api.schemas.ts';
import { uuidParam } from '../path-params.ts';
import { parseBody, parseQuery } from '../validation.ts';

/** /v1/webhooks: mounted inside the /v1 router, behind its credential, rate limit and version headers. */
export function webhookRoutes(context: AppContext): Router {
  const { webhooks } = context.services;
  const router = Router();

  /** The path's endpoint id; a malformed one answers not_found like an unknown one. */
  const endpointId = (req: Request) => uuidParam(req, 'id', 'Webhook endpoint');

  router.post('/webhooks', requireScope('videos:write'), async (req, res) => {
    const { endpoint, secret } = await webhooks.register(credentialOf(res).userId, parseBody(CreateWebhookRequest, req));
    res.status(201).json({ ...endpointRepresentation(endpoint), secret });
  });

  router.get('/webhooks', requireScope('videos:read'), async (_req, res) => {
    res.json({ object: 'list', data: (await webhooks.list(credentialOf(res).userId)).map(endpointRepresentation) });
  });

  router.post('/webhooks/default-secret', requireScope('videos:write'), async (req, res) => {
    const { overlap_seconds } = parseBody(RotateSecretRequest, req);
    const { secret, previousExpiresAt } = await webhooks.rotateDefaultSecret(credentialOf(res).userId, overlap_seconds);
    res.status(201).json({ secret, previous_secret_expires_at: previousExpiresAt?.toISOString() ?? null });
  });

  router.get('/webhooks/:id', requireScope('videos:read'), async (req, res) => {
    res.json(endpointRepresentation(await webhooks.get(credentialOf(res).userId, endpointId(req))));
  });

  router.delete('/webhooks/:id', requireScope('videos:write'), async (req, res) => {
    await webhooks.remove(credentialOf(res).userId, endpointId(req));
    res.status(204).end();
  });

  router.post('/webhooks/:id/rotate-secret', requireScope('videos:write'), async (req, res) => {
    const { overlap_seconds } = parseBody(RotateSecretRequest, req);
    const { endpoint, secret } = await webhooks.rotate(credentialOf(res).userId, endpointId(req), overlap_seconds);
    res.json({ ...endpointRepresentation(endpoint), secret });
  });

  router.get('/videos/:id/webhook-deliveries', requireScope('videos:read'), async (req, res) => {
    const id = uuidParam(req, 'id', 'Video');
    const { limit } = parseQuery(DeliveryListQuery, req);
    res.json(deliveryListRepresentation(await webhooks.videoUrlDeliveries(credentialOf(res).userId, id, limit)));
  });

  router.post('/webhooks/:id/enable', requireScope('videos:write'), async (req, res) => {
    res.json(endpointRepresentation(await webhooks.enable(credentialOf(res).userId, endpointId(req))));
  });

  router.get('/webhooks/:id/deliveries', requireScope('videos:read'), async (req, res) => {
    const id = endpointId(req);
    const { limit } = parseQuery(DeliveryListQuery, req);
    res.json(deliveryListRepresentation(await webhooks.endpointDeliveries(credentialOf(res).userId, id, limit)));
  });

  router.post('/webhooks/:id/deliveries/:delivery_id/redeliver', requireScope('videos:write'), async (req, res) => {
    // The delivery id as sent: the service answers not_found for the endpoint first, then for a malformed or unknown delivery.
    const delivery = await webhooks.redeliver(credentialOf(res).userId, endpointId(req), String(req.params.delivery_id));
    res.status(202).json(deliveryRepresentation(delivery, []));
  });

  router.post('/webhooks/:id/test', requireScope('videos:write'), async (req, res) => {
    const { delivery, attempts } = await webhooks.test(credentialOf(res).userId, endpointId(req));
    res.json(deliveryRepresentation(delivery, attempts));
  });

  return router;
}

const readSecurity = credentialSecurity('videos:read');
const writeSecurity = credentialSecurity('videos:write');
const jsonBody = (schema: z.ZodType, required = true) => ({ required, content: { 'application/json': { schema } } });

const SIGNATURE_HEADERS = z.object({
  'webhook-id': z.string().meta({ description: 'The delivery id: the same on every attempt of a delivery (deduplicate on it).' }),
  'webhook-timestamp': z.string().meta({ description: 'Seconds since the Unix epoch when this attempt was signed; refuse ones far from now.' }),
  'webhook-signature': z.string().meta({
    description: 'Space-separated `v1,<base64 HMAC-SHA256>` of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded secret after `whsec_`; '
      + 'two during a secret rotation\'s overlap. Any one matching is enough.',
  }),
});

export function registerWebhookPaths(registry: OpenAPIRegistry): void {
  const common = ['unauthorized', 'forbidden', 'rate_limited'] as const;
  const deliveryLogResponses = { 200: jsonResponse('Deliveries, newest first, each with its attempts.', WebhookDeliveryList), ...errorResponses('invalid_request', ...common, 'not_found') };
  const tags = ['public-api'];
  registry.registerPath({
    method: 'post', path: '/v1/webhooks', operationId: 'createWebhook', tags, summary: 'Register a webhook endpoint',
    description:
      'Deliveries follow Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). The signing secret is answered once. '
      + 'The URL must be public https (the image_url rules), checked now and at every delivery.',
    security: writeSecurity,
    request: { body: jsonBody(CreateWebhookRequest) },
    responses: {
      201: jsonResponse('Registered; `secret` is shown only here.', CreatedWebhookEndpoint),
      ...errorResponses('invalid_request', 'malformed_json', 'nesting_too_deep', 'webhook_url_refused', 'webhook_limit_reached', ...common),
    },
  });
  registry.registerPath({
    method: 'get', path: '/v1/webhooks', operationId: 'listWebhooks', tags, summary: 'List webhook endpoints',
    security: readSecurity,
    responses: { 200: jsonResponse('The account\'s endpoints, oldest first (secrets are never shown again).', WebhookEndpointList), ...errorResponses(...common) },
  });
  registry.registerPath({
    method: 'post', path: '/v1/webhooks/default-secret', operationId: 'rotateDefaultWebhookSecret', tags, summary: 'Make or replace the default secret (signs webhook_url deliveries)',
    description:
      'The account\'s default secret signs the deliveries to a video\'s own `webhook_url` (POST /v1/videos). Answered once; a replaced one keeps signing '
      + 'beside the new one for `overlap_seconds` (default 24 hours).',
    security: writeSecurity,
    request: { body: jsonBody(RotateSecretRequest, false) },
    responses: { 201: jsonResponse('The new default secret.', DefaultWebhookSecret), ...errorResponses('invalid_request', 'malformed_json', 'nesting_too_deep', ...common) },
  });
  registry.registerPath({
    method: 'get', path: '/v1/webhooks/{id}', operationId: 'getWebhook', tags, summary: 'Get a webhook endpoint',
    security: readSecurity,
    request: { params: WebhookIdPath },
    responses: { 200: jsonResponse('The endpoint.', WebhookEndpointSchema), ...errorResponses(...common, 'not_found') },
  });
  registry.registerPath({
    method: 'delete', path: '/v1/webhooks/{id}', operationId: 'deleteWebhook', tags, summary: 'Delete a webhook endpoint',
    description: 'Pending retries to it stop; its delivery log goes with it.',
    security: writeSecurity,
    request: { params: WebhookIdPath },
    responses: { 204: { description: 'Deleted.' }, ...errorResponses(...common, 'not_found') },
  });
  registry.registerPath({
    method: 'post', path: '/v1/webhooks/{id}/rotate-secret', operationId: 'rotateWebhookSecret', tags, summary: 'Rotate an endpoint\'s signing secret',
    description: 'Answers the new secret once. During the overlap (default 24 hours) every delivery carries two signatures, one per secret.',
    security: writeSecurity,
    request: { params: WebhookIdPath, body: jsonBody(RotateSecretRequest, false) },
    responses: { 200: jsonResponse('The endpoint with its new secret.', CreatedWebhookEndpoint), ...errorResponses('invalid_request', 'malformed_json', 'nesting_too_deep', ...common, 'not_found') },
  });
  registry.registerPath({
    method: 'get', path: '/v1/videos/{id}/webhook-deliveries', operationId: 'listVideoWebhookDeliveries', tags, summary: 'The delivery log of a video\'s own webhook_url',
    description: 'Deliveries to the `webhook_url` given when the video was created (signed with the account\'s default secret), newest first, each with its attempts; an empty list for a video without one.',
    security: readSecurity,
    request: { params: VideoIdPath, query: DeliveryListQuery },
    responses: deliveryLogResponses,
  });
  registry.registerPath({
    method: 'post', path: '/v1/webhooks/{id}/enable', operationId: 'enableWebhook', tags, summary: 'Turn a disabled endpoint on again',
    description:
      'An endpoint that failed every attempt for WEBHOOK_DISABLE_AFTER_SECONDS (5 days by default) is disabled and its owner emailed. Once it is fixed, this '
      + 'turns it on again (its address is vetted again) and forgets the failure streak: new events reach it, and what it missed can be redelivered from its '
      + 'log. Calling it on an endpoint that is on changes nothing.',
    security: writeSecurity,
    request: { params: WebhookIdPath },
    responses: { 200: jsonResponse('The endpoint, on.', WebhookEndpointSchema), ...errorResponses(...common, 'not_found', 'webhook_url_refused') },
  });
  registry.registerPath({
    method: 'get', path: '/v1/webhooks/{id}/deliveries', operationId: 'listWebhookDeliveries', tags, summary: 'The delivery log of an endpoint',
    security: readSecurity,
    request: { params: WebhookIdPath, query: DeliveryListQuery },
    responses: deliveryLogResponses,
  });
  registry.registerPath({
    method: 'post', path: '/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver', operationId: 'redeliverWebhook', tags, summary: 'Send a delivery again',
    description:
      'The same webhook-id and body, newly signed, with a fresh retry schedule; attempts continue the numbering of the log. 409 conflict while the '
      + 'delivery is still being attempted or the endpoint is disabled.',
    security: writeSecurity,
    request: { params: DeliveryPath },
    responses: { 202: jsonResponse('Redelivery started.', WebhookDeliverySchema), ...errorResponses(...common, 'not_found', 'conflict') },
  });
  registry.registerPath({
    method: 'post', path: '/v1/webhooks/{id}/test', operationId: 'testWebhook', tags, summary: 'Send a signed test event now',
    description: 'One `webhook.test` attempt, made before answering and without retries, logged like any delivery.',
    security: writeSecurity,
    request: { params: WebhookIdPath },
    responses: { 200: jsonResponse('The test delivery and its attempt.', WebhookDeliverySchema), ...errorResponses(...common, 'not_found') },
  });
  for (const [name, summary] of [
    ['video.processing', 'A video started rendering'],
    ['video.completed', 'A video finished; data.video_url is set'],
    ['video.failed', 'A video failed; data.error says why'],
  ] as const) {
    registry.registerWebhook({
      method: 'post', path: name, operationId: `webhook_${name.replace('.', '_')}`, tags, summary,
      description: 'Sent once per video to every endpoint subscribed to the event, and to the video\'s webhook_url. Answer 2xx within 10 seconds.',
      // No credential: the receiver authenticates the message by its webhook-signature.
      security: [],
      request: { headers: SIGNATURE_HEADERS, body: jsonBody(VideoEventPayload) },
      responses: { 200: { description: 'Any 2xx acknowledges the delivery; anything else (redirects included) is retried.' } },
    });
  }
  registry.registerWebhook({
    method: 'post', path: 'webhook.test', operationId: 'webhook_test', tags, summary: 'POST /v1/webhooks/{id}/test',
    security: [],
    request: { headers: SIGNATURE_HEADERS, body: jsonBody(TestEventPayload) },
    responses: { 200: { description: 'Any 2xx acknowledges it.' } },
  });
}
