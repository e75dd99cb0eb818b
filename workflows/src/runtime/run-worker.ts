import type { NativeConnection, Worker } from '@temporalio/worker';

export type RunningWorker = { stop(): Promise<void> };

/** Runs a worker until stopped; stopping drains in-flight tasks, then closes the worker's connection. */
export function runWorker(worker: Worker, connection: NativeConnection): RunningWorker {
  const running = worker.run();
  return {
    stop: async () => {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
