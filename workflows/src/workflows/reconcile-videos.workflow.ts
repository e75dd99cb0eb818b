import { allHandlersFinished, condition, continueAsNew, defineSignal, isCancellation, log, setHandler, workflowInfo } from '@temporalio/workflow';
import { RECONCILER_WORKFLOW, TASK_QUEUES } from '../constants.ts';
import { parseContract } from '../contract-parsing.ts';
import { controlActivitySchemas, ReconcilerSettings } from '../contract.ts';
import { proxyParsedActivities } from './parsed-activities.ts';

const control = proxyParsedActivities(controlActivitySchemas, {
  taskQueue: TASK_QUEUES.control,
  // A few Temporal calls per unsettled video; the next round picks up whatever this one did not reach.
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 },
});

const reconcilerSettingsSignal = defineSignal<[ReconcilerSettings]>(RECONCILER_WORKFLOW.settingsSignal);

/**
 * Rounds per run before the workflow continues as new: about an hour at the default interval, and about 700
 * history events, so a run's history stays short to read and to replay.
 */
const ROUNDS_PER_RUN = 60;

/**
 * Every paid video either renders or is refunded, whatever process died between its charge and its render:
 * one workflow (RECONCILER_WORKFLOW.id) that reconciles, waits `intervalSeconds`, and again, continuing as new
 * every ROUNDS_PER_RUN rounds. One run per hour shows in the Temporal UI rather than one per minute; each
 * round's result (videos checked, started, failed) is its activity's result in the history. A round that fails
 * is logged and the next one tries again: the loop must outlive a database outage.
 */
export async function reconcileVideos(started: ReconcilerSettings): Promise<never> {
  let settings = parseContract(ReconcilerSettings, started, 'The input of the workflow reconcileVideos');
  let changed = false;
  setHandler(reconcilerSettingsSignal, (next) => {
    // A signal handler that throws fails the workflow task again and again: settings that break the contract are ignored.
    const parsed = ReconcilerSettings.safeParse(next);
    if (!parsed.success) return log.warn('ignored reconciler settings that break the contract', { settings: next });
    settings = parsed.data;
    changed = true;
  });
  for (let round = 0; round < ROUNDS_PER_RUN && !workflowInfo().continueAsNewSuggested; round++) {
    try {
      await control.reconcileVideos({ graceSeconds: settings.graceSeconds });
    } catch (error) {
      if (isCancellation(error)) throw error;
      log.warn('a reconciliation round failed; the next round tries again', { error: String(error) });
    }
    changed = false;
    // New settings take effect at once rather than after the old interval.
    await condition(() => changed, settings.intervalSeconds * 1000);
  }
  await condition(allHandlersFinished);
  return continueAsNew<typeof reconcileVideos>(settings);
}
