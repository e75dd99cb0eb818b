import Long from 'long';
import { randomBytes } from 'node:crypto';
import { Connection } from '@temporalio/client';
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
