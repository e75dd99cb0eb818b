import { readFile, rm, writeFile } from 'node:fs/promises';
import type { Logger } from '../logging/logger.ts';

/** How often a process being waited for is looked at. */
const POLL_MS = 100;

/** Records a process's pid in `pidFile` (private to this user), so that a later start can recognise it. */
export async function recordPid(pidFile: string, pid: number): Promise<void> {
  await writeFile(pidFile, `${pid}\n`, { mode: 0o600 });
}

/** The process `pidFile` names, when it is alive and its command line passes `isOurs` (a reused pid is not ours). */
export async function recordedProcess(pidFile: string, isOurs: (commandLine: string[]) => boolean): Promise<number | undefined> {
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid || !alive(pid)) return undefined;
  const commandLine = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
  return isOurs(commandLine) ? pid : undefined;
}

export type Leftover = {
  pidFile: string;
  isOurs: (commandLine: string[]) => boolean;
  /** What the warning calls it. */
  what: string;
  /**
   * How the leftover is asked to stop: 'SIGTERM', or 'already' for one that stops by itself (a supervised child
   * whose supervisor is gone), which is only waited for. Either is killed once `graceMs` has passed.
   */
  ask: 'SIGTERM' | 'already';
  graceMs: number;
};

/**
 * Stops what a crashed run of this DATA_DIR left running, as its pid file names it, and forgets the pid file.
 * Resolves once the process is gone.
 */
export async function stopLeftover(leftover: Leftover, logger: Logger): Promise<void> {
  const pid = await recordedProcess(leftover.pidFile, leftover.isOurs);
  if (pid !== undefined) {
    logger.warn({ leftoverPid: pid }, `stopping the ${leftover.what} a previous run of this DATA_DIR left running`);
    if (leftover.ask === 'SIGTERM') signal(pid, 'SIGTERM');
    const deadline = Date.now() + leftover.graceMs;
    while (alive(pid) && Date.now() < deadline) await pause();
    if (alive(pid)) signal(pid, 'SIGKILL');
    while (alive(pid)) await pause();
  }
  await rm(leftover.pidFile, { force: true });
}

const pause = () => new Promise((resolve) => setTimeout(resolve, POLL_MS));

const alive = (pid: number) => signal(pid, 0);

function signal(pid: number, name: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}
