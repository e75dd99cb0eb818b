/** Which of petsing's task queues someone polls: the control worker's and the render nodes'. */
export type QueueName = 'control' | 'render';

/** Asks the workflow engine how many workers have polled a task queue lately (temporal/task-queue-pollers.ts). */
export interface QueueHealth {
  pollers(queue: QueueName): Promise<number>;
}
