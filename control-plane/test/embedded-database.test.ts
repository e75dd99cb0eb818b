import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openPGlite } from '../src/db/database.ts';
import { emptyDatabaseImage } from '../src/db/pglite-image.ts';

/**
 * The embedded database (PGlite under DATA_DIR/postgres): a new one starts from the empty database kept from the
 * first initdb on this machine (pglite-image.ts), and is a database of its own from then on: migrated, written,
 * closed and opened again, it holds what was written, and another new one holds nothing of it.
 */
describe('the embedded database of a new DATA_DIR', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'petsing-embedded-db-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('starts from the kept empty database, keeps what is written across a reopen, and shares nothing with another', async () => {
    const first = await openPGlite(join(root, 'first'));
    await first.close();
    // Whatever made the first database on this machine, an empty one is kept now.
    expect((await emptyDatabaseImage())?.size).toBeGreaterThan(1_000_000);

    const dataDir = join(root, 'second');
    let handle = await openPGlite(dataDir);
    expect(await readdir(join(dataDir, 'postgres'))).toContain('PG_VERSION');
    await migrateToLatest(handle.db);
    await sql`create table kept (value text)`.execute(handle.db);
    await sql`insert into kept values ('written')`.execute(handle.db);
    await handle.close();

    handle = await openPGlite(dataDir);
    expect((await sql<{ value: string }>`select value from kept`.execute(handle.db)).rows).toEqual([{ value: 'written' }]);
    // Opened again, not started anew: every migration is recorded, none to apply.
    expect((await migrateToLatest(handle.db)).results).toEqual([]);
    await handle.close();

    const other = await openPGlite(join(root, 'third'));
    expect((await sql<{ name: string | null }>`select to_regclass('kept')::text as name`.execute(other.db)).rows).toEqual([{ name: null }]);
    await other.close();
  });
});
