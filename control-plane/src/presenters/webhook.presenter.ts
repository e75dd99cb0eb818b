import type { WebhookDelivery, WebhookDeliveryAttempt, WebhookEndpoint } from '../db/schema.ts';

/** WebhookEndpoint: an endpoint of /v1/webhooks, never with its secret; a rotated-out secret's end only while it still signs. */
export const endpointRepresentation = (endpoint: WebhookEndpoint) => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events,
  disabled_at: endpoint.disabled_at?.toISOString() ?? null,
  previous_secret_expires_at: endpoint.previous_secret_expires_at && endpoint.previous_secret_expires_at.getTime() > Date.now() ? endpoint.previous_secret_expires_at.toISOString() : null,
  created_at: endpoint.created_at.toISOString(),
});

/** WebhookDelivery: a delivery of the log with its attempts. */
export const deliveryRepresentation = (delivery: WebhookDelivery, attempts: WebhookDeliveryAttempt[]) => ({
  id: delivery.id,
  event_type: delivery.event_type,
  video_id: delivery.video_id,
  state: delivery.state,
  created_at: delivery.created_at.toISOString(),
  attempts: attempts.map((attempt) => ({
    attempt: attempt.attempt,
    attempted_at: attempt.attempted_at.toISOString(),
    status_code: attempt.status_code,
    latency_ms: attempt.latency_ms,
    response_snippet: attempt.response_snippet,
    error: attempt.error,
  })),
});

/** WebhookDeliveryList: a delivery log, newest first. */
export const deliveryListRepresentation = (entries: { delivery: WebhookDelivery; attempts: WebhookDeliveryAttempt[] }[]) => ({
  object: 'list' as const,
  data: entries.map(({ delivery, attempts }) => deliveryRepresentation(delivery, attempts)),
});
