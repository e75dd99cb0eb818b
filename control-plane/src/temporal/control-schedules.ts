import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { FREE_CREDITS_EMAIL_SCHEDULE, RECONCILE_VIDEOS_SCHEDULE, TASK_QUEUES, type ReconcileVideosInput } from '@petsing/workflows';

export type ReconcileSettings = { intervalSeconds: number; graceSeconds: number };

/**
 * The control plane's Temporal Schedules: each fires once per period however many control workers run, and
 * survives restarts (the embedded dev server persists them in DATA_DIR/temporal.db). Every control worker
 * makes sure they exist at start.
 */
export class ControlSchedules {
  constructor(
    private readonly client: () => Promise<Client>,
    private readonly reconcile: ReconcileSettings,
  ) {}

  async ensure(): Promise<void> {
    await this.ensureFreeCreditsEmail();
    await this.ensureReconcileVideos();
  }

  /**
   * The monthly "free credits renewed" email. An existing schedule is left as it is (to change its
   * definition, delete it with `temporal schedule delete --schedule-id free-credits-renewed-email`).
   */
  private async ensureFreeCreditsEmail(): Promise<void> {
    await this.create({
      scheduleId: FREE_CREDITS_EMAIL_SCHEDULE.id,
      // Cron expressions of a schedule without a timezone are UTC, the zone free credits reset in.
      spec: { cronExpressions: [FREE_CREDITS_EMAIL_SCHEDULE.cron] },
      action: {
        type: 'startWorkflow',
        workflowType: FREE_CREDITS_EMAIL_SCHEDULE.workflowType,
        workflowId: FREE_CREDITS_EMAIL_SCHEDULE.id,
        taskQueue: TASK_QUEUES.control,
        args: [],
      },
      // A run missed while Temporal was down is made up within three days; later, the news is stale.
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '3 days' },
    });
  }

  /** The reconciliation of paid videos; its interval and grace follow this worker's settings. */
  private async ensureReconcileVideos(): Promise<void> {
    const input: ReconcileVideosInput = { graceSeconds: this.reconcile.graceSeconds };
    const options = {
      scheduleId: RECONCILE_VIDEOS_SCHEDULE.id,
      spec: { intervals: [{ every: `${this.reconcile.intervalSeconds} seconds` }] },
      action: {
        type: 'startWorkflow',
        workflowType: RECONCILE_VIDEOS_SCHEDULE.workflowType,
        workflowId: RECONCILE_VIDEOS_SCHEDULE.id,
        taskQueue: TASK_QUEUES.control,
        args: [input],
      },
      // Runs missed while Temporal was down collapse into one: each run looks at every unsettled video.
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
    } satisfies ScheduleOptions;
    if (await this.create(options)) return;
    await (await this.client()).schedule.getHandle(options.scheduleId).update((previous) => ({ ...previous, spec: options.spec, action: { ...previous.action, args: [input] } }));
  }

  /** Creates the schedule; false when it exists already. */
  private async create(options: ScheduleOptions): Promise<boolean> {
    try {
      await (await this.client()).schedule.create(options);
      return true;
    } catch (error) {
      if (error instanceof ScheduleAlreadyRunning) return false;
      throw error;
    }
  }
}
