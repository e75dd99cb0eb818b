import type { Client } from '@temporalio/client';
import { TASK_QUEUES } from '@petsing/workflows';
import type { QueueHealth, QueueName } from '../services/ports/queue-health.ts';
import { TASK_QUEUE_TYPE } from './task-queue-types.ts';

/**
 * The workers Temporal has seen polling each queue in the last minutes (DescribeTaskQueue): workflow pollers on
 * the control queue (the control worker runs every workflow), activity pollers on the render queue.
 */
export class TaskQueuePollers implements QueueHealth {
  constructor(
    private readonly client: () => Promise<Client>,
    private readonly namespace: string,
  ) {}

  async pollers(queue: QueueName): Promise<number> {
    const { pollers } = await (await this.client()).workflowService.describeTaskQueue({
      namespace: this.namespace,
      taskQueue: { name: TASK_QUEUES[queue] },
      taskQueueType: queue === 'control' ? TASK_QUEUE_TYPE.workflow : TASK_QUEUE_TYPE.activity,
    });
    return pollers?.length ?? 0;
  }
}
