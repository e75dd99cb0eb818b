import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '../logging/logger.ts';

/** A child that died is started again after this, doubled at each quick death up to the cap. */
const FIRST_RESTART_DELAY_MS = 1_000;
const MAX_RESTART_DELAY_MS = 30_000;
/** A child that ran this long before dying starts again after the first delay. */
const STEADY_AFTER_MS = 60_000;
/** How long a child has to stop on SIGTERM (a render node hands its render back) before it is killed. */
const STOP_GRACE_MS = 30_000;

export type SupervisedChild = { pid(): number | undefined; stop(): Promise<void> };

/**
 * Runs a petsing command (`args` to the CLI at `cli`) as a child of this process and keeps it running: a child that
 * exits unasked is logged and started again after a delay that grows while it keeps dying. The child shares an IPC
 * channel with this process, so it notices when this process is gone, even killed with SIGKILL, and stops itself
 * (no orphan). `stop` asks it to stop (SIGTERM) and waits, killing it after STOP_GRACE_MS.
 */
export function superviseChild(part: string, cli: string, args: string[], logger: Logger): SupervisedChild {
  let child: ChildProcess | undefined;
  let exited = Promise.resolve();
  let stopping = false;
  let delay = FIRST_RESTART_DELAY_MS;
  let restart: NodeJS.Timeout | undefined;

  const launch = () => {
    const startedAt = Date.now();
    // A process group of its own: a Ctrl-C at the terminal reaches this process only, which stops the child in order.
    const current = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true });
    child = current;
    logger.info({ part, pid: current.pid }, 'started');
    exited = new Promise<void>((resolve) => {
      const ended = (code: number | null, signal: NodeJS.Signals | null, error?: Error) => {
        child = undefined;
        resolve();
        if (stopping) return;
        if (Date.now() - startedAt >= STEADY_AFTER_MS) delay = FIRST_RESTART_DELAY_MS;
        logger.warn({ part, code, signal, err: error, restartInSeconds: delay / 1000 }, 'exited unasked; starting it again');
        restart = setTimeout(launch, delay);
        delay = Math.min(delay * 2, MAX_RESTART_DELAY_MS);
      };
      current.once('exit', (code, signal) => ended(code, signal));
      // A child that could not be spawned at all emits no exit.
      current.once('error', (error) => {
        if (current.pid === undefined) ended(null, null, error);
      });
    });
  };
  launch();

  return {
    pid: () => child?.pid,
    stop: async () => {
      stopping = true;
      clearTimeout(restart);
      const current = child;
      if (!current) return;
      current.kill('SIGTERM');
      const kill = setTimeout(() => current.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(kill);
    },
  };
}
