import type { Client } from '@temporalio/client';
import { TASK_QUEUES } from '@petsing/workflows';
import type { Logger } from '../logging/logger.ts';
import type { Metrics } from '../services/ports/metrics.ts';
import { TASK_QUEUE_TYPE } from './task-queue-types.ts';
import { repeatEvery, type RepeatingTask } from '../services/repeat-every.ts';

/** How often the control worker samples the render queue's backlog (petsing_render_backlog*). */
const SAMPLE_INTERVAL_MS = 15_000;


type LongLike = number | { toNumber(): number } | null | undefined;
const toNumber = (value: LongLike) => (value === null || value === undefined ? 0 : typeof value === 'number' ? value : value.toNumber());

/**
 * Samples the render queue's backlog from Temporal: the renders scheduled and not yet taken by a render node
 * (DescribeTaskQueue with report_stats, on the activity queue of the render nodes), and how long the oldest of
 * them has waited. Temporal's own figures, so they count every render waiting (template previews too) and
 * nothing a node has started.
 */
export class RenderBacklogSampler {
  constructor(
    private readonly client: () => Promise<Client>,
    private readonly namespace: string,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {}

  /** One sample: true when Temporal reported the queue's statistics (servers before task-queue stats report none). */
  async sample(): Promise<boolean> {
    const { stats } = await (await this.client()).workflowService.describeTaskQueue({
      namespace: this.namespace,
      taskQueue: { name: TASK_QUEUES.render },
      taskQueueType: TASK_QUEUE_TYPE.activity,
      reportStats: true,
    });
    if (!stats) return false;
    const age = stats.approximateBacklogAge;
    this.metrics.renderBacklog(toNumber(stats.approximateBacklogCount), toNumber(age?.seconds) + (age?.nanos ?? 0) / 1e9);
    return true;
  }

  /** Samples now and every 15 s until stopped; a failure or a server without statistics is logged once, until it passes. */
  start(): RepeatingTask {
    let failing = false;
    let unreported = false;
    return repeatEvery(
      SAMPLE_INTERVAL_MS,
      async () => {
        const reported = await this.sample();
        if (!reported && !unreported) this.logger.warn({ taskQueue: TASK_QUEUES.render }, 'Temporal reports no task-queue statistics: petsing_render_backlog is not sampled');
        unreported = !reported;
        if (failing) this.logger.info('the render backlog is sampled again');
        failing = false;
      },
      (error) => {
        if (!failing) this.logger.warn({ err: error }, 'could not sample the render backlog from Temporal; retrying every 15 s');
        failing = true;
      },
    );
  }
}
