import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A new private folder (0700) in the system's temp folder, named `<prefix>-<random>`. */
export function createScratchDirectory(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `${prefix}-`));
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
 * Removes the scratch folders of these prefixes last changed before `changedBefore`: the work that made one
 * always removes it, so one left behind belongs to a process that died (killed mid-render, mid-request). The
 * age gate keeps the folders of work still running, here or in another process on the same host. Answers how
 * many it removed.
 */
export async function removeAbandonedScratch(prefixes: readonly string[], changedBefore: Date, root = tmpdir()): Promise<number> {
  let removed = 0;
  for (const name of await readdir(root)) {
    if (!prefixes.some((prefix) => name.startsWith(`${prefix}-`))) continue;
    const path = join(root, name);
    const stats = await lstat(path).catch(() => undefined);
    if (!stats?.isDirectory() || stats.mtime >= changedBefore) continue;
    await rm(path, { recursive: true, force: true });
    removed++;
  }
  return removed;
}
