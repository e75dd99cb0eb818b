import { createRequire } from 'node:module';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { CHECKOUT_CACHE_DIR } from '@petsing/platform/tools';

/**
 * A new embedded database (a DATA_DIR's first start) is PGlite's initdb: 5-10 s of CPU on two cores. The empty
 * database it makes is the same for every DATA_DIR on one PGlite version, so the first one made on a machine is
 * kept (PGlite's dumpDataDir, about 4.5 MB) and later new databases start from that copy in about a second
 * (loadDataDir): a second DATA_DIR, a staging copy, every test run. Kept in CHECKOUT_CACHE_DIR; a cache that cannot be
 * read or written is only slower.
 */
let imagePath: Promise<string | undefined> | undefined;

/** Where the empty database of the installed PGlite version is kept, or undefined when its version cannot be told. */
function emptyImagePath(): Promise<string | undefined> {
  imagePath ??= (async () => {
    try {
      let folder = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
      for (let depth = 0; depth < 4; depth++, folder = dirname(folder)) {
        const manifest = await readFile(join(folder, 'package.json'), 'utf8').then((text) => JSON.parse(text) as { name?: string; version?: string }, () => undefined);
        if (manifest?.name === '@electric-sql/pglite' && manifest.version) return join(CHECKOUT_CACHE_DIR, `pglite-${manifest.version}-empty.tar.gz`);
      }
    } catch {
      // Not resolvable from here (a bundled build): no cache.
    }
    return undefined;
  })();
  return imagePath;
}

/** The kept empty database to start a new one from, if there is one. */
export async function emptyDatabaseImage(): Promise<Blob | undefined> {
  const path = await emptyImagePath();
  if (!path) return undefined;
  const image = await readFile(path).catch(() => undefined);
  return image ? new Blob([image]) : undefined;
}

/** Keeps the database `pglite` just made by initdb (before anything is written to it) as the empty one, unless one is kept. */
export async function keepEmptyDatabaseImage(pglite: PGlite): Promise<void> {
  const path = await emptyImagePath();
  if (!path || (await stat(path).then(() => true, () => false))) return;
  try {
    const image = Buffer.from(await (await pglite.dumpDataDir('gzip')).arrayBuffer());
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    // Whole or not at all: another process may be keeping the same at the same moment.
    const partial = `${path}.${process.pid}.partial`;
    await writeFile(partial, image, { mode: 0o600 });
    await rename(partial, path);
  } catch {
    // A read-only checkout: every new database runs initdb.
  }
}
