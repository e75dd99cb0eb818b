import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { TASK_QUEUES, webhookDeliveryWorkflowId, type DeliverWebhookInput } from '@petsing/workflows';
import type { WebhookScheduling } from '../services/ports/webhook-scheduling.ts';

/** The control plane's adapter to Temporal for webhooks: starts the workflow that delivers one message. */
export class WebhookScheduler implements WebhookScheduling {
  constructor(private readonly client: () => Promise<Client>) {}

  /** Starts the delivery; starting it again (a retried emission) is a no-op, as the workflow id is the delivery's. */
  async startDelivery(input: DeliverWebhookInput): Promise<void> {
    try {
      await (await this.client()).workflow.start('deliverWebhook', {
        taskQueue: TASK_QUEUES.control,
        workflowId: webhookDeliveryWorkflowId(input.deliveryId, input.firstAttempt),
        args: [input],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
}
