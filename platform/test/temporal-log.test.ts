import { DefaultLogger, type LogEntry, type LogMetadata } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { waitUntil } from '../../test/support/processes.ts';
import { collapseUnreachable, expectActivityOnly } from '../src/runtime/temporal-log.ts';

/** A line of the SDK's core while the server is down, as it forwards them (target and error as recorded on a real outage). */
const retry = (call: string): [string, LogMetadata] => [
  `gRPC call ${call} retried 7 times`,
  {
    sdkComponent: 'core',
    target: 'temporalio_client::retry',
    error: 'Status { code: Unavailable, message: "tcp connect error", source: Some(tonic::transport::Error(Transport, ConnectError(ConnectError("tcp connect error", 127.0.0.1:7233, Os { code: 111, kind: ConnectionRefused, message: "Connection refused" })))) }',
  },
];

const recorder = () => {
  const entries: LogEntry[] = [];
  return { entries, logger: new DefaultLogger('TRACE', (entry) => entries.push(entry)), said: () => entries.map(({ level, message }) => `${level} ${message}`) };
};

describe('the Temporal SDK lines in our log', () => {
  it('say a server that cannot be reached once, count its retries, and say once that it answers again', async () => {
    const { logger, entries, said } = recorder();
    let up = false;
    let probes = 0;
    const collapsed = collapseUnreachable(logger, { address: '127.0.0.1:7233', probeEveryMs: 5, answers: async () => (probes++, up) });

    for (let round = 0; round < 30; round++) collapsed.warn(...retry(round % 2 ? 'poll_activity_task_queue' : 'record_worker_heartbeat'));
    collapsed.info('Worker state changed', { sdkComponent: 'worker', state: 'RUNNING' });
    collapsed.warn('Activity failed', { sdkComponent: 'worker', error: 'something else' });
    expect(said()).toEqual([
      'WARN Temporal is unreachable; the SDK retries, and its retry lines are left out of the log until it answers again',
      'INFO Worker state changed',
      'WARN Activity failed',
    ]);
    expect(entries[0]!.meta).toMatchObject({ address: '127.0.0.1:7233', target: 'temporalio_client::retry', firstRetry: 'gRPC call record_worker_heartbeat retried 7 times' });

    await waitUntil('a few probes while it is down', () => probes >= 3, 5_000);
    up = true;
    await waitUntil('the line that says it answers', () => entries.length === 4, 5_000);
    expect(said()[3]).toBe('WARN Temporal answers again');
    expect(entries[3]!.meta).toMatchObject({ address: '127.0.0.1:7233', retriesNotLogged: 29 });

    // A second outage is said again.
    up = false;
    collapsed.warn(...retry('poll_workflow_task_queue'));
    collapsed.error(...retry('poll_workflow_task_queue'));
    expect(said().slice(4)).toEqual(['WARN Temporal is unreachable; the SDK retries, and its retry lines are left out of the log until it answers again']);
  });

  it('log the "No workflows registered" warning at debug for the activity-only queues named, and as a warning for any other', () => {
    const { logger, said } = recorder();
    const render = expectActivityOnly(logger, ['petsing-render-gpu', 'petsing-render-detect']);
    const message = 'No workflows registered, not polling for workflow tasks';
    render.warn(message, { sdkComponent: 'worker', taskQueue: 'petsing-render-gpu' });
    render.warn(message, { sdkComponent: 'worker', taskQueue: 'petsing-control' });
    render.warn('No activities registered, not polling for activity tasks', { sdkComponent: 'worker', taskQueue: 'petsing-render-gpu' });
    expect(said()).toEqual([`DEBUG ${message}`, `WARN ${message}`, 'WARN No activities registered, not polling for activity tasks']);
  });
});
