import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Every request body with files is received into a folder named like this, in the system's temp folder. */
const UPLOAD_FOLDER_PREFIX = 'petsing-upload-';

/** A new private folder (0700) for one request's received files. */
export function createUploadFolder(): Promise<string> {
  return mkdtemp(join(tmpdir(), UPLOAD_FOLDER_PREFIX));
}

/**
 * Removes upload folders last changed before `changedBefore`: a request always removes its own, so one
 * left behind belongs to a process that died mid-request. Returns how many it removed.
 */
export async function removeAbandonedUploadFolders(changedBefore: Date, root = tmpdir()): Promise<number> {
  let removed = 0;
  for (const name of await readdir(root)) {
    if (!name.startsWith(UPLOAD_FOLDER_PREFIX)) continue;
    const path = join(root, name);
    const stats = await lstat(path).catch(() => undefined);
    if (!stats?.isDirectory() || stats.mtime >= changedBefore) continue;
    await rm(path, { recursive: true, force: true });
    removed++;
  }
  return removed;
}
