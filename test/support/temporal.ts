import Long from 'long';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Connection, type Client } from '@temporalio/client';
import { historyFromJSON, type History } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { waitFor } from './processes.ts';

/**
 * A Temporal namespace of this test file's own on the shared dev server, so workers of files running in
 * parallel never pick up each other's tasks (the task-queue names are fixed constants).
 */
export async function createTestNamespace(): Promise<{ address: string; namespace: string }> {
  const address = inject('temporalAddress');
  const namespace = `test-${randomBytes(5).toString('hex')}`;
  const connection = await Connection.connect({ address });
  try {
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: { seconds: Long.fromNumber(24 * 3600) },
    });
    await waitFor(`namespace ${namespace}`, async () => {
      await connection.workflowService.describeNamespace({ namespace });
      return true;
    });
  } finally {
    await connection.close();
  }
  return { address, namespace };
}

/**
 * Replays every finished run of a workflow type against the workflow bundle production workers load (built
 * ahead of time the same way), so a change that breaks determinism fails a test. Throws on the first run that
 * does not replay; answers how many were replayed.
 */
export async function replayFinishedHistories(client: Client, workflowType: string): Promise<number> {
  const histories = [];
  for await (const execution of client.workflow.list({ query: `WorkflowType = '${workflowType}' AND ExecutionStatus != 'Running'` })) {
    histories.push({ workflowId: execution.workflowId, history: await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory() });
  }
  await replay(histories, workflowType);
  return histories.length;
}

/**
 * Replays histories recorded by earlier workflow code and kept in test/fixtures/workflow-histories/<name>.json
 * (historyToJSON) against the current code: a change to a workflow must keep them replaying (patched()).
 */
export async function replayRecordedHistories(names: string[]): Promise<void> {
  const histories = await Promise.all(names.map(async (name) => ({
    workflowId: name,
    history: historyFromJSON(JSON.parse(await readFile(new URL(`../fixtures/workflow-histories/${name}.json`, import.meta.url), 'utf8'))),
  })));
  await replay(histories, 'recorded');
}

/**
 * The workflow bundle production control workers load: the run's (test/global-setup.ts bundles it once, with the
 * tracing interceptors, as WORKFLOW_BUNDLE_PATH), else one bundled here.
 */
export async function productionWorkflowBundle(): Promise<{ codePath: string } | { code: string }> {
  if (process.env.WORKFLOW_BUNDLE_PATH) return { codePath: process.env.WORKFLOW_BUNDLE_PATH };
  return bundleWorkflowCode({ workflowsPath: fileURLToPath(import.meta.resolve('@petsing/workflows/workflows')) });
}

async function replay(histories: { workflowId: string; history: History }[], replayName: string): Promise<void> {
  const workflowBundle = await productionWorkflowBundle();
  for await (const result of Worker.runReplayHistories({ workflowBundle, replayName }, histories)) {
    if (result.error) throw new Error(`replay of ${result.workflowId} failed`, { cause: result.error });
  }
}
