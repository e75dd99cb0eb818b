import { readFileSync } from 'node:fs';
import { lstat, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A process as a scratch folder's name records it: its pid and, on Linux, its start time (clock ticks after boot,
 * /proc/<pid>/stat), so that a pid the kernel has since given to another process is not taken for the owner.
 */
type Owner = { pid: number; startTime: string };

/** The start time in a /proc/<pid>/stat (its field 22). */
function startTimeOf(stat: string): string {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '0';
}

let self: Owner | undefined;
function thisProcess(): Owner {
  if (!self) {
    let startTime = '0';
    try {
      startTime = startTimeOf(readFileSync('/proc/self/stat', 'utf8'));
    } catch {
      // No /proc (macOS): the pid alone names the owner.
    }
    self = { pid: process.pid, startTime };
  }
  return self;
}

/** `<prefix>-<pid>.<start time>-`: what mkdtemp completes with six random characters. */
const ownedName = (prefix: string, owner: Owner) => `${prefix}-${owner.pid}.${owner.startTime}-`;
const OWNER = /^(\d+)\.(\d+)-[^-]+$/;

/** Whether the process that made a folder still runs: a live pid whose start time is the recorded one. */
async function ownerRuns(owner: Owner): Promise<boolean> {
  if (owner.pid === process.pid) return owner.startTime === thisProcess().startTime;
  if (owner.startTime !== '0') {
    const stat = await readFile(`/proc/${owner.pid}/stat`, 'utf8').catch(() => undefined);
    // A zombie (killed, not yet reaped by its parent) runs no more.
    return stat !== undefined && startTimeOf(stat) === owner.startTime && !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  }
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A new private folder (0700) in the system's temp folder, named `<prefix>-<pid>.<start time>-<random>` after the
 * process that makes it, so that a sweep (removeAbandonedScratch) can tell a folder whose process died from one in
 * use.
 */
export function createScratchDirectory(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), ownedName(prefix, thisProcess())));
}

/** Runs `work` in a fresh private temporary directory and removes it afterwards, whatever happens. */
export async function withScratchDirectory<T>(prefix: string, work: (directory: string) => Promise<T>): Promise<T> {
  const directory = await createScratchDirectory(prefix);
  try {
    return await work(directory);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/**
 * Removes the scratch folders of these prefixes that belong to no running work: the work that made one always
 * removes it, so one left behind belongs to a process that died (killed mid-render, mid-request). A folder whose
 * name records its process (createScratchDirectory) goes as soon as that process is gone, whatever its age (a
 * render node started again removes what its predecessor left at once), and stays while it runs; a folder without
 * one (made by an earlier version) goes once last changed before `changedBefore`. Answers how many it removed.
 * `beforeRemoving` sees each one first (a render node hands back the render its predecessor died in).
 *
 * The pids are this host's: a temp folder shared between pid namespaces (two containers mounting one /tmp) would
 * make another container's folders look abandoned.
 */
export async function removeAbandonedScratch(
  prefixes: readonly string[],
  changedBefore: Date,
  root = tmpdir(),
  /** Called with each abandoned folder (and its prefix) before it goes, to read what the dead work left there. */
  beforeRemoving?: (path: string, prefix: string) => Promise<void>,
): Promise<number> {
  let removed = 0;
  for (const name of await readdir(root)) {
    const prefix = prefixes.find((candidate) => name.startsWith(`${candidate}-`));
    if (prefix === undefined) continue;
    const path = join(root, name);
    const stats = await lstat(path).catch(() => undefined);
    if (!stats?.isDirectory()) continue;
    const owner = OWNER.exec(name.slice(prefix.length + 1));
    const abandoned = owner ? !(await ownerRuns({ pid: Number(owner[1]), startTime: owner[2]! })) : stats.mtime < changedBefore;
    if (!abandoned) continue;
    await beforeRemoving?.(path, prefix);
    // A child of the dead process (ffmpeg finishing its file) may still write into it for a moment.
    await rm(path, { recursive: true, force: true, maxRetries: 3 });
    removed++;
  }
  return removed;
}
