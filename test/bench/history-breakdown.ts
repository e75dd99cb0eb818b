import type { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Timestamp = NonNullable<HistoryEvent['eventTime']>;

/** Milliseconds since the epoch, comparable with Date.now() (the server runs on this machine). */
function timestampMs(time: Timestamp | null | undefined): number {
  if (!time) return Number.NaN;
  return Number(time.seconds ?? 0) * 1000 + (time.nanos ?? 0) / 1e6;
}

/** Where one workflow spent its time, in ms, split into named segments. */
export type Breakdown = Map<string, number>;

/**
 * Splits a renderVideo history into queue waits and run times: per activity type, scheduled→started
 * (waiting for a worker slot or a poller) and started→completed (the activity itself); workflow tasks
 * summed the same way. `createStartMs` ties the client's create call to the server's clock.
 */
export function breakdownHistory(events: HistoryEvent[], createStartMs: number, createEndMs: number, doneMs: number): Breakdown {
  const out: Breakdown = new Map();
  const add = (name: string, ms: number) => out.set(name, (out.get(name) ?? 0) + ms);
  const byId = new Map(events.map((event) => [Number(event.eventId), event]));
  const started = events.find((event) => event.workflowExecutionStartedEventAttributes);

  add('create call (store photo, insert+charge, start workflow)', createEndMs - createStartMs);
  add('create start → workflow started (server)', timestampMs(started?.eventTime) - createStartMs);

  for (const event of events) {
    const wftStarted = event.workflowTaskStartedEventAttributes;
    if (wftStarted) {
      const scheduledId = Number(wftStarted.scheduledEventId);
      const wait = timestampMs(event.eventTime) - timestampMs(byId.get(scheduledId)?.eventTime);
      add('workflow tasks: wait (all)', wait);
      add(`  workflow task ${workflowTaskTrigger(byId, scheduledId)}: wait`, wait);
    }
    const wftCompleted = event.workflowTaskCompletedEventAttributes;
    if (wftCompleted) {
      add('workflow tasks: run (all)', timestampMs(event.eventTime) - timestampMs(byId.get(Number(wftCompleted.startedEventId))?.eventTime));
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const scheduled = byId.get(Number(completed.scheduledEventId));
      const attemptStarted = byId.get(Number(completed.startedEventId));
      const name = scheduled?.activityTaskScheduledEventAttributes?.activityType?.name ?? 'unknown';
      add(`${name}: wait`, timestampMs(attemptStarted?.eventTime) - timestampMs(scheduled?.eventTime));
      add(`${name}: run`, timestampMs(event.eventTime) - timestampMs(attemptStarted?.eventTime));
    }
  }
  // The row turns `completed` inside completeVideo; the remainder is the notification's trip to LISTEN.
  const completeStarted = events.find(
    (event) =>
      event.activityTaskStartedEventAttributes &&
      byId.get(Number(event.activityTaskStartedEventAttributes.scheduledEventId))?.activityTaskScheduledEventAttributes?.activityType?.name ===
        'completeVideo',
  );
  if (completeStarted) add('completeVideo started → LISTEN saw completed', doneMs - timestampMs(completeStarted.eventTime));
  return out;
}

/** What made the server schedule a workflow task: the event just before it (start, or an activity's result). */
function workflowTaskTrigger(byId: Map<number, HistoryEvent>, scheduledId: number): string {
  const previous = byId.get(scheduledId - 1);
  if (!previous || previous.workflowExecutionStartedEventAttributes) return 'after start';
  const completed = previous.activityTaskCompletedEventAttributes;
  if (completed) return `after ${byId.get(Number(completed.scheduledEventId))?.activityTaskScheduledEventAttributes?.activityType?.name ?? 'activity'}`;
  return 'other';
}
