import type { NativeConnection, Worker } from '@temporalio/worker';

export type RunningWorker = { stop(): Promise<void> };

/**
 * Runs a worker until stopped; stopping drains in-flight tasks, then closes the worker's connection.
 * Stopping is idempotent and also completes a shutdown someone else began (the SDK's own signal
 * handlers, a fatal worker error): it asks for a shutdown only while the worker is still running.
 */
export function runWorker(worker: Worker, connection: NativeConnection): RunningWorker {
  const running = worker.run();
  let stopping: Promise<void> | undefined;
  return {
    stop: () =>
      (stopping ??= (async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        try {
          await running;
        } finally {
          await connection.close();
        }
      })()),
  };
}
