import type { DeliverWebhookInput } from '@petsing/workflows';

/** Starts the durable delivery of one webhook message (temporal/webhook-scheduler.ts); starting it twice is a no-op. */
export interface WebhookScheduling {
  startDelivery(input: DeliverWebhookInput): Promise<void>;
}
