import { z } from 'zod';
import { MAX_URL_LENGTH } from '../../media/host-vetting.ts';
import { uuidPathField } from '../path-params.ts';
import { MAX_WEBHOOK_ENDPOINTS, RESPONSE_SNIPPET_BYTES, TEST_EVENT, WEBHOOK_EVENTS } from '../../services/webhook.service.ts';
import { ApiVideo } from './public-api.schemas.ts';

const MAX_ROTATION_OVERLAP_SECONDS = 7 * 24 * 3600;

const WebhookEventType = z.enum(WEBHOOK_EVENTS).meta({ id: 'WebhookEventType', description: 'A video event an endpoint can subscribe to.' });

const WebhookUrlField = z
  .url()
  .max(MAX_URL_LENGTH)
  .meta({
    description:
      'A public https:// URL on the default port, without user:password@, whose host resolves only to public addresses; checked at registration '
      + 'and again, names resolved afresh, at every delivery.',
    example: 'https://example.com/petsing-webhooks',
  });

export const CreateWebhookRequest = z
  .object({
    url: WebhookUrlField,
    events: z.array(WebhookEventType).min(1).max(WEBHOOK_EVENTS.length).default([...WEBHOOK_EVENTS]).meta({ description: 'Default: every event.' }),
  })
  .meta({ id: 'CreateWebhookRequest' });

export const RotateSecretRequest = z
  .object({
    overlap_seconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_ROTATION_OVERLAP_SECONDS)
      .optional()
      .meta({ description: 'How long the previous secret keeps signing beside the new one (a second signature); default 86400 (24 hours).' }),
  })
  .meta({ id: 'RotateWebhookSecretRequest' });

const SecretField = z.string().meta({
  description: 'The signing secret (Standard Webhooks: whsec_ + base64). Shown only in this answer; store it to verify deliveries.',
  example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
});

export const WebhookEndpoint = z
  .object({
    id: z.uuid(),
    url: z.url(),
    events: z.array(WebhookEventType),
    disabled_at: z.iso.datetime().nullable().meta({ description: 'Set when deliveries failed for too long (see the README); a disabled endpoint receives nothing.' }),
    previous_secret_expires_at: z.iso.datetime().nullable().meta({ description: 'Until then the secret before the last rotation signs too.' }),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'WebhookEndpoint' });

export const CreatedWebhookEndpoint = WebhookEndpoint.extend({ secret: SecretField }).meta({ id: 'CreatedWebhookEndpoint' });

export const WebhookEndpointList = z
  .object({ object: z.literal('list'), data: z.array(WebhookEndpoint) })
  .meta({ id: 'WebhookEndpointList', description: `At most ${MAX_WEBHOOK_ENDPOINTS} endpoints per account.` });

export const DefaultWebhookSecret = z
  .object({
    secret: SecretField,
    previous_secret_expires_at: z.iso.datetime().nullable().meta({ description: 'Until then the replaced default secret signs too; null for the first one.' }),
  })
  .meta({ id: 'DefaultWebhookSecret' });

const WebhookDeliveryAttempt = z
  .object({
    attempt: z.number().int().positive(),
    attempted_at: z.iso.datetime(),
    status_code: z.number().int().nullable().meta({ description: 'The HTTP status the endpoint answered; null when it did not answer.' }),
    latency_ms: z.number().int(),
    response_snippet: z.string().nullable().meta({ description: `The first ${RESPONSE_SNIPPET_BYTES} bytes of the answer.` }),
    error: z.string().nullable().meta({ description: 'Why the attempt failed (non-2xx answer, timeout, refused address...); null on success.' }),
  })
  .meta({ id: 'WebhookDeliveryAttempt' });

export const WebhookDelivery = z
  .object({
    id: z.uuid().meta({ description: 'The webhook-id header of every attempt of this delivery.' }),
    event_type: z.string().meta({ examples: [...WEBHOOK_EVENTS, TEST_EVENT] }),
    video_id: z.uuid().nullable(),
    state: z.enum(['pending', 'delivered', 'failed']).meta({ description: 'pending while attempts remain; failed once the retry schedule is spent.' }),
    created_at: z.iso.datetime(),
    attempts: z.array(WebhookDeliveryAttempt),
  })
  .meta({ id: 'WebhookDelivery' });

export const WebhookDeliveryList = z.object({ object: z.literal('list'), data: z.array(WebhookDelivery) }).meta({ id: 'WebhookDeliveryList' });

export const DeliveryListQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(20) });

export const WebhookIdPath = z.object({ id: uuidPathField('Webhook endpoint id (uuid).') });
export const DeliveryPath = WebhookIdPath.extend({ delivery_id: uuidPathField('Delivery id (uuid), the webhook-id.') });

/** The body of every delivery of a video event (the OpenAPI `webhooks` section). */
export const VideoEventPayload = z
  .object({
    type: WebhookEventType,
    timestamp: z.iso.datetime().meta({ description: 'When the event happened.' }),
    data: ApiVideo,
  })
  .meta({ id: 'VideoEventPayload', description: 'data is the video as GET /v1/videos/{id} answered at the event; its links expire, so fetch the video for fresh ones.' });

export const TestEventPayload = z
  .object({ type: z.literal(TEST_EVENT), timestamp: z.iso.datetime(), data: z.object({ endpoint_id: z.uuid() }) })
  .meta({ id: 'WebhookTestPayload' });
