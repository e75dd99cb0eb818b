import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import type { Logger } from '../logging/logger.ts';
import { recordPid } from './leftover-process.ts';
import type { Lifecycle } from './lifecycle.ts';

/** A child that died is started again after this, doubled at each quick death up to the cap. */
const FIRST_RESTART_DELAY_MS = 1_000;
const MAX_RESTART_DELAY_MS = 30_000;
/** A child that ran this long before dying starts again after the first delay. */
const STEADY_AFTER_MS = 60_000;
/** How long a child has to stop on SIGTERM (a render node hands its render back) before it is killed. */
export const STOP_GRACE_MS = 30_000;

/** What a supervised child sends its supervisor once it serves. */
const READY_MESSAGE = 'petsing:ready';

export type ChildSpec = {
  /** What the logs call it: "render worker". */
  part: string;
  /** The CLI's arguments that run it: ['worker', 'render']. */
  args: string[];
  /** Where its running pid is kept, so that a later start recognises a leftover of a crashed run. */
  pidFile: string;
};

export type SupervisedChild = {
  pid(): number | undefined;
  /** Resolves once the first run serves; rejects with ChildFailedToStart when it exits before that. */
  ready: Promise<void>;
  stop(): Promise<void>;
};

/** A child that exited before it ever served: the start fails with its exit code (78 for a configuration error). */
export class ChildFailedToStart extends Error {
  constructor(
    readonly part: string,
    readonly exitCode: number,
  ) {
    super(`the ${part} exited (${exitCode}) before it started serving`);
    this.name = 'ChildFailedToStart';
  }
}

/**
 * Runs a petsing command (`spec.args` to the CLI at `cli`) as a child of this process and keeps it running: once it
 * has served, a child that exits unasked is logged and started again after a delay that grows while it keeps dying.
 * One that exits before it ever served fails `ready` instead (a wrong setting would only fail again). The child
 * shares an IPC channel with this process, so it notices when this process is gone, even killed with SIGKILL, and
 * stops itself (no orphan; `followSupervisor`). `stop` asks it to stop (SIGTERM) and waits, killing it after
 * STOP_GRACE_MS.
 */
export function superviseChild(spec: ChildSpec, cli: string, logger: Logger): SupervisedChild {
  const { part } = spec;
  let child: ChildProcess | undefined;
  let exited = Promise.resolve();
  let stopping = false;
  let served = false;
  let delay = FIRST_RESTART_DELAY_MS;
  let restart: NodeJS.Timeout | undefined;
  let markReady!: () => void;
  let failStart!: (error: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failStart = reject;
  });
  // Nobody may be awaiting it yet when the child fails.
  ready.catch(() => {});

  const launch = () => {
    const startedAt = Date.now();
    // A process group of its own: a Ctrl-C at the terminal reaches this process only, which stops the child in order.
    const current = spawn(process.execPath, [cli, ...spec.args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true });
    child = current;
    if (current.pid !== undefined) {
      recordPid(spec.pidFile, current.pid).catch((error: unknown) => logger.warn({ part, err: error }, 'could not record its pid; a start after a crash will not wait for it'));
    }
    logger.info({ part, childPid: current.pid }, 'started');
    current.on('message', (message) => {
      if (message !== READY_MESSAGE) return;
      served = true;
      markReady();
    });
    exited = new Promise<void>((resolve) => {
      const ended = (code: number | null, signal: NodeJS.Signals | null, error?: Error) => {
        child = undefined;
        resolve();
        if (stopping) return;
        if (!served) {
          logger.error({ part, code, signal, err: error }, 'exited before it started serving');
          failStart(new ChildFailedToStart(part, code ?? 1));
          return;
        }
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
    ready,
    stop: async () => {
      stopping = true;
      clearTimeout(restart);
      const current = child;
      if (current) {
        current.kill('SIGTERM');
        const kill = setTimeout(() => current.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(kill);
      }
      await rm(spec.pidFile, { force: true });
    },
  };
}

/** The child's side of supervision (`followSupervisor`). */
export type SupervisorLink = {
  /**
   * Says the process serves: tells a supervising `petsing start` (which reports the service running once every part
   * does), and from now on stops `lifecycle` when the supervisor is gone. Answers whether this process is supervised.
   */
  serving(lifecycle: Lifecycle): boolean;
};

/**
 * Called first in a process `petsing start` may run: when its supervisor is gone, even killed with SIGKILL (the IPC
 * channel closes), the process stops too: what it runs, once it serves; at once, while it is still starting (the
 * channel may close before it serves, and a 'disconnect' listener added later would never hear it). A process
 * started by hand has no channel and follows nobody.
 */
export function followSupervisor(): SupervisorLink {
  if (!process.send) return { serving: () => false };
  let running: Lifecycle | undefined;
  const supervisorGone = () => {
    if (running) void running.stop().then(() => process.exit(0));
    else process.exit(0);
  };
  process.once('disconnect', supervisorGone);
  // Gone already, before this process got this far.
  if (!process.connected) supervisorGone();
  return {
    serving: (lifecycle) => {
      running = lifecycle;
      if (process.connected) process.send!(READY_MESSAGE);
      else supervisorGone();
      return true;
    },
  };
}
