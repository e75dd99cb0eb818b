import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { FREE_CREDITS_EMAIL_SCHEDULE, TASK_QUEUES } from '@petsing/workflows';

/**
 * The monthly "free credits renewed" email is a Temporal Schedule, so it fires once per month however many
 * control workers run, and survives restarts (the embedded dev server persists it in DATA_DIR/temporal.db).
 * Every control worker makes sure it exists at start; an existing schedule is left as it is (to change its
 * definition, delete it with `temporal schedule delete --schedule-id free-credits-renewed-email`).
 */
export class LifecycleEmailSchedule {
  constructor(private readonly client: () => Promise<Client>) {}

  async ensure(): Promise<void> {
    try {
      await (await this.client()).schedule.create({
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
}
