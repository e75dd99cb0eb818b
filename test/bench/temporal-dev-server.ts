import { Connection } from '@temporalio/client';
import { freePort, startProcess, stopProcess, waitFor } from '../support/processes.ts';

export type DevServer = { address: string; pid: number | undefined; stop(): Promise<void> };

/**
 * A Temporal dev server of the benchmark's own (in-memory SQLite, `default` namespace), so a run never
 * shares a server, and therefore task queues, with a test suite or another benchmark.
 */
export async function startTemporalDevServer(): Promise<DevServer> {
  const port = await freePort();
  const child = startProcess(
    process.env.TEMPORAL_CLI_PATH ?? 'temporal',
    ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'error'],
    'temporal dev server',
  );
  const address = `127.0.0.1:${port}`;
  try {
    await waitFor('temporal dev server', async () => {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace: 'default' });
      } finally {
        await connection.close();
      }
      return true;
    });
  } catch (error) {
    await stopProcess(child);
    throw error;
  }
  return { address, pid: child.pid, stop: () => stopProcess(child) };
}
