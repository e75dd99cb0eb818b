import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ApplicationFailure, Client, Connection, ScheduleNotFoundError } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECONCILER_WORKFLOW, RETIRED_RECONCILE_SCHEDULE_ID, TASK_QUEUES, type ReconcileVideosInput, type ReconcilerSettings } from '@petsing/workflows';
import { createTestNamespace } from '../../test/support/temporal.ts';
import { waitFor } from '../../test/support/processes.ts';
import { RecurringWork } from '../src/temporal/recurring-work.ts';

const workflowsPath = fileURLToPath(import.meta.resolve('@petsing/workflows/workflows'));

/** The reconciler's activity as the worker sees it: each round's input. */
function recordingActivity(failFirst: boolean) {
  const rounds: { input: ReconcileVideosInput }[] = [];
  return {
    rounds,
    activities: {
      reconcileVideos: async (input: ReconcileVideosInput) => {
        rounds.push({ input });
        if (failFirst && rounds.length === 1) throw ApplicationFailure.nonRetryable('the database is down');
        return { checked: 0, started: 0, failed: 0 };
      },
    },
  };
}

describe('the reconciler: one long-running workflow instead of one run a minute', () => {
  describe('its loop, on the time-skipping test server', () => {
    let env: TestWorkflowEnvironment;
    beforeAll(async () => {
      const path = execFileSync('sh', ['-c', 'command -v temporal-test-server']).toString().trim();
      env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
    }, 120_000);
    afterAll(async () => {
      await env?.teardown();
    });

    it('reconciles every interval, outlives a failed round, takes new settings at once and continues as new within about an hour', async () => {
      const recorder = recordingActivity(true);
      const worker = await Worker.create({ connection: env.nativeConnection, taskQueue: TASK_QUEUES.control, workflowsPath, activities: recorder.activities });
      const settings: ReconcilerSettings = { graceSeconds: 120, intervalSeconds: 60 };
      await worker.runUntil(async () => {
        const handle = await env.client.workflow.start(RECONCILER_WORKFLOW.workflowType, {
          workflowId: RECONCILER_WORKFLOW.id,
          taskQueue: TASK_QUEUES.control,
          args: [settings],
        });
        const firstRunId = handle.firstExecutionRunId;
        await env.sleep('10 minutes');
        // The first round failed; the loop went on, one round a minute.
        expect(recorder.rounds.length).toBeGreaterThanOrEqual(10);
        expect(recorder.rounds.length).toBeLessThanOrEqual(12);
        expect(recorder.rounds.every((round) => round.input.graceSeconds === 120)).toBe(true);

        const before = recorder.rounds.length;
        await handle.signal(RECONCILER_WORKFLOW.settingsSignal, { graceSeconds: 30, intervalSeconds: 600 });
        await waitFor('the round the new settings start', async () => recorder.rounds.length > before, 10_000);
        expect(recorder.rounds[before]!.input).toEqual({ graceSeconds: 30 });
        await env.sleep('25 minutes');
        const slower = recorder.rounds.slice(before);
        expect(slower.length, 'one round at once, then one per 10 minutes').toBeLessThanOrEqual(4);
        // Settings that break the contract are ignored; the loop keeps the last good ones.
        await handle.signal(RECONCILER_WORKFLOW.settingsSignal, { graceSeconds: -1, intervalSeconds: 1 });

        await handle.signal(RECONCILER_WORKFLOW.settingsSignal, settings);
        await env.sleep('70 minutes');
        const latest = await env.client.workflow.getHandle(RECONCILER_WORKFLOW.id).describe();
        expect(latest.runId, 'the run continued as new').not.toBe(firstRunId);
        expect(latest.status.name).toBe('RUNNING');
        const first = await env.client.workflow.getHandle(RECONCILER_WORKFLOW.id, firstRunId).describe();
        expect(first.status.name).toBe('CONTINUED_AS_NEW');
        const history = await env.client.workflow.getHandle(RECONCILER_WORKFLOW.id, firstRunId).fetchHistory();
        expect(history.events!.length, 'a run stays short').toBeLessThan(1000);
        // The new run carried the settings over.
        expect(recorder.rounds.at(-1)!.input).toEqual({ graceSeconds: 120 });
        await handle.terminate('test over');
      });
    }, 180_000);
  });

  describe('its start, by every control worker (dev server)', () => {
    let client: Client;
    let connection: Connection;
    let worker: Worker;
    let running: Promise<void>;
    const recorder = recordingActivity(false);

    beforeAll(async () => {
      const { address, namespace } = await createTestNamespace();
      connection = await Connection.connect({ address });
      client = new Client({ connection, namespace });
      worker = await Worker.create({ connection: await NativeConnection.connect({ address }), namespace, taskQueue: TASK_QUEUES.control, workflowsPath, activities: recorder.activities });
      running = worker.run();
    }, 120_000);
    afterAll(async () => {
      worker?.shutdown();
      await running;
      await connection?.close();
    });

    it('starts one reconciler however many workers start, hands it their settings, and retires the old per-minute schedule', async () => {
      // The namespace as an earlier version left it: a Schedule that started one reconcileVideos run a minute.
      await client.schedule.create({
        scheduleId: RETIRED_RECONCILE_SCHEDULE_ID,
        spec: { intervals: [{ every: '1 hour' }] },
        action: { type: 'startWorkflow', workflowType: 'notRun', taskQueue: 'nobody-polls', args: [] },
      });
      const first = new RecurringWork(async () => client, { graceSeconds: 120, intervalSeconds: 3600 });
      const second = new RecurringWork(async () => client, { graceSeconds: 45, intervalSeconds: 3600 });
      await Promise.all([first.ensure(), second.ensure()]);

      await expect(client.schedule.getHandle(RETIRED_RECONCILE_SCHEDULE_ID).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
      const runs = [];
      for await (const execution of client.workflow.list({ query: `WorkflowType = '${RECONCILER_WORKFLOW.workflowType}'` })) runs.push(execution);
      expect(runs.map((run) => [run.workflowId, run.status.name])).toEqual([[RECONCILER_WORKFLOW.id, 'RUNNING']]);
      await waitFor('the first round', async () => recorder.rounds.length > 0, 30_000);

      // A worker started later with other settings: the running reconciler takes them and runs a round with them at once.
      await new RecurringWork(async () => client, { graceSeconds: 7, intervalSeconds: 3600 }).ensure();
      await waitFor('a round with the new grace', async () => recorder.rounds.some((round) => round.input.graceSeconds === 7), 30_000);
      await client.workflow.getHandle(RECONCILER_WORKFLOW.id).terminate('test over');
    });
  });
});
