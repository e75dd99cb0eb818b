import proto from '@temporalio/proto';

// @temporalio/proto is CommonJS: Node's ESM loader sees only its default export, not the named `temporal`.
const { TaskQueueType } = proto.temporal.api.enums.v1;

/** The two kinds of task a Temporal task queue holds, as DescribeTaskQueue names them. */
export const TASK_QUEUE_TYPE = { workflow: TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, activity: TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY } as const;
