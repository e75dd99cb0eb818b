import type { ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import type { Logger } from '../logging/logger.ts';
import { recordPid } from './leftover-process.ts';

/** A part that died is started again after this, doubled at each quick death up to the cap. */
const FIRST_RESTART_DELAY_MS = 1_000;
const MAX_RESTART_DELAY_MS = 30_000;
/** A part that ran this long before dying starts again after the first delay. */
const STEADY_AFTER_MS = 60_000;

/** One run of a supervised part: its process, and a promise that resolves once it serves (rejects with why not). */
export type LaunchedProcess = { process: ChildProcess; serving: Promise<void> };

export type SupervisedSpec = {
  /** What the logs call it: "render worker", "Temporal dev server". */
  part: string;
  /** Where its running pid is kept, so that a later start recognises a leftover of a crashed run. */
  pidFile: string;
  /** How long it has to stop on SIGTERM (a render node hands its render back) before it is killed. */
  graceMs: number;
  /** Starts one run. */
  launch(): LaunchedProcess;
};

export type SupervisedProcess = {
  pid(): number | undefined;
  /** Resolves once the first run serves; rejects when it exits (or gives up) before that. */
  ready: Promise<void>;
  stop(): Promise<void>;
};

/** A part that exited before it ever served: the start fails with its exit code (78 for a configuration error). */
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
 * Keeps a part of the service running (`petsing start`): once it has served, a run that ends unasked is logged (one
 * JSON line, with its exit code or signal) and started again after a delay that grows while it keeps dying, and the
 * restart is logged too. A first run that ends before it ever served fails `ready` instead (a wrong setting would
 * only fail again): with the reason its `serving` gave, else ChildFailedToStart. A run whose `serving` gives up while
 * the process lives is stopped, and counts as a death. `stop` asks the running process to stop (SIGTERM) and waits,
 * killing it after `graceMs`.
 */
export function superviseProcess(spec: SupervisedSpec, logger: Logger): SupervisedProcess {
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
  // Nobody may be awaiting it yet when the part fails.
  ready.catch(() => {});

  const launch = (restarted: boolean) => {
    const startedAt = Date.now();
    const { process: current, serving } = spec.launch();
    child = current;
    let gaveUp: Error | undefined;
    if (current.pid !== undefined) {
      recordPid(spec.pidFile, current.pid).catch((error: unknown) => logger.warn({ part, err: error }, 'could not record its pid; a start after a crash will not wait for it'));
    }
    logger.info({ part, childPid: current.pid }, restarted ? 'started again' : 'started');
    serving.then(
      () => {
        if (child !== current) return;
        // At the level of the death it ends, so that a log kept at warn shows both.
        if (restarted) logger.warn({ part, childPid: current.pid }, 'serving again');
        served = true;
        markReady();
      },
      (error: unknown) => {
        gaveUp = error instanceof Error ? error : new Error(String(error));
        if (child === current && !stopping) current.kill('SIGKILL');
      },
    );
    exited = new Promise<void>((resolve) => {
      const ended = (code: number | null, signal: NodeJS.Signals | null, error?: Error) => {
        if (child === current) child = undefined;
        resolve();
        if (stopping) return;
        if (!served) {
          logger.error({ part, code, signal, err: error ?? gaveUp }, 'exited before it started serving');
          failStart(gaveUp ?? new ChildFailedToStart(part, code ?? 1));
          return;
        }
        if (Date.now() - startedAt >= STEADY_AFTER_MS) delay = FIRST_RESTART_DELAY_MS;
        logger.warn({ part, childPid: current.pid, code, signal, err: error ?? gaveUp, restartInSeconds: delay / 1000 }, 'exited unasked; starting it again');
        restart = setTimeout(() => launch(true), delay);
        delay = Math.min(delay * 2, MAX_RESTART_DELAY_MS);
      };
      current.once('exit', (code, signal) => ended(code, signal));
      // A process that could not be spawned at all emits no exit.
      current.once('error', (error) => {
        if (current.pid === undefined) ended(null, null, error);
      });
    });
  };
  launch(false);

  return {
    pid: () => child?.pid,
    ready,
    stop: async () => {
      stopping = true;
      clearTimeout(restart);
      const current = child;
      if (current && current.exitCode === null && current.signalCode === null) {
        current.kill('SIGTERM');
        const kill = setTimeout(() => current.kill('SIGKILL'), spec.graceMs);
        await exited;
        clearTimeout(kill);
      }
      await rm(spec.pidFile, { force: true });
    },
  };
}
