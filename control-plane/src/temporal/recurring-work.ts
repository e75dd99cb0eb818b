import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import {
  FREE_CREDITS_EMAIL_SCHEDULE,
  RECONCILER_WORKFLOW,
  RETIRED_RECONCILE_SCHEDULE_ID,
  TASK_QUEUES,
  type ReconcilerSettings,
} from '@petsing/workflows';

/**
 * The control plane's recurring work in Temporal: the monthly email's Schedule and the reconciler's long-running
 * workflow. Each exists once per namespace however many control workers run, and survives restarts (the
 * embedded dev server persists both in DATA_DIR/temporal.db). Every control worker makes sure they exist at start.
 */
export class RecurringWork {
  constructor(
    private readonly client: () => Promise<Client>,
    private readonly reconciler: ReconcilerSettings,
  ) {}

  async ensure(): Promise<void> {
    const client = await this.client();
    await this.ensureFreeCreditsEmail(client);
    await this.ensureReconciler(client);
  }

  /**
   * The monthly "free credits renewed" email. An existing schedule is left as it is (to change its
   * definition, delete it with `temporal schedule delete --schedule-id free-credits-renewed-email`).
   */
  private async ensureFreeCreditsEmail(client: Client): Promise<void> {
    try {
      await client.schedule.create({
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
    } catch (error) {
      if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    }
  }

  /**
   * Starts the reconciler, or hands the running one this worker's settings (Signal-With-Start: one call, no
   * race between two workers starting at once). A namespace where the reconciler was still a Schedule that
   * started a workflow a minute loses that Schedule here.
   */
  private async ensureReconciler(client: Client): Promise<void> {
    try {
      await client.schedule.getHandle(RETIRED_RECONCILE_SCHEDULE_ID).delete();
    } catch (error) {
      if (!(error instanceof ScheduleNotFoundError)) throw error;
    }
    await client.workflow.signalWithStart(RECONCILER_WORKFLOW.workflowType, {
      workflowId: RECONCILER_WORKFLOW.id,
      taskQueue: TASK_QUEUES.control,
      args: [this.reconciler],
      signal: RECONCILER_WORKFLOW.settingsSignal,
      signalArgs: [this.reconciler],
    });
  }
}
