import { chmod, lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Group and other permission bits: nothing the service writes is for other local users. */
const SHARED_BITS = 0o077;

/**
 * Makes what the service writes private to its user: new files (this process's and its children's,
 * such as the Temporal dev server's database and the object store) through the umask, and files
 * written with explicit modes (PGlite's first database) or by a looser older version, by taking group
 * and other bits off DATA_DIR's tree. Idempotent: call it before starting and once started.
 */
export async function keepDataPrivate(dataDir: string): Promise<void> {
  process.umask(SHARED_BITS);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await tighten(dataDir);
}

async function tighten(path: string): Promise<void> {
  const stats = await lstat(path).catch(() => undefined);
  // Links are left alone (chmod would follow them out of DATA_DIR); a file gone meanwhile is fine.
  if (!stats || stats.isSymbolicLink()) return;
  if (stats.mode & SHARED_BITS) await chmod(path, stats.mode & 0o7700 & ~SHARED_BITS).catch(() => undefined);
  if (stats.isDirectory()) {
    for (const entry of await readdir(path).catch(() => [])) await tighten(join(path, entry));
  }
}
