import { spawn } from 'node:child_process';
import type { Lifecycle } from './lifecycle.ts';
import type { LaunchedProcess, SupervisedSpec } from './supervised-process.ts';

/** How long a petsing part has to stop on SIGTERM (a render node hands its render back) before it is killed. */
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

/**
 * A petsing command (`spec.args` to the CLI at `cli`) as a part `superviseProcess` keeps running. It serves once it
 * says so over the IPC channel it shares with this process, through which it also notices when this process is
 * gone, even killed with SIGKILL, and stops itself (no orphan; `followSupervisor`).
 */
export function petsingPart(spec: ChildSpec, cli: string): SupervisedSpec {
  return {
    part: spec.part,
    pidFile: spec.pidFile,
    graceMs: STOP_GRACE_MS,
    launch: (): LaunchedProcess => {
      // A process group of its own: a Ctrl-C at the terminal reaches this process only, which stops the child in order.
      const child = spawn(process.execPath, [cli, ...spec.args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true });
      const serving = new Promise<void>((resolve) => {
        const onMessage = (message: unknown) => {
          if (message !== READY_MESSAGE) return;
          child.off('message', onMessage);
          resolve();
        };
        child.on('message', onMessage);
      });
      return { process: child, serving };
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
