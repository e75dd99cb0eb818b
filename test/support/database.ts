import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateToLatest, openPGlite, openPostgres, type DatabaseHandle } from '../../control-plane/src/db/database.ts';

/** The machine's Postgres (trust auth on CI); each test file gets a database of its own in it. */
const testPostgresUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export type TestDatabase = DatabaseHandle & { url: string | undefined; drop(): Promise<void> };

export async function createPostgresTestDatabase(): Promise<TestDatabase> {
  const name = `petsing_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: testPostgresUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(testPostgresUrl);
  url.pathname = `/${name}`;
  const handle = await openPostgres(url.toString(), 20);
  await migrateToLatest(handle.db);
  return {
    ...handle,
    url: url.toString(),
    drop: async () => {
      await handle.close();
      const cleanup = new pg.Client({ connectionString: testPostgresUrl });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  };
}

export async function createPGliteTestDatabase(): Promise<TestDatabase> {
  const handle = await openPGlite(undefined);
  await migrateToLatest(handle.db);
  return { ...handle, url: undefined, drop: () => handle.close() };
}

export const databaseBackends = [
  { name: 'postgres', create: createPostgresTestDatabase },
  { name: 'pglite', create: createPGliteTestDatabase },
] as const;
