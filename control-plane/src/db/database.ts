import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, Migrator, PostgresDialect, type MigrationResultSet } from 'kysely';
import pg from 'pg';
import { migrations } from './migrations/index.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { emptyDatabaseImage, keepEmptyDatabaseImage } from './pglite-image.ts';
import type { Database } from './schema.ts';

export type DatabaseHandle = {
  db: Kysely<Database>;
  kind: 'postgres' | 'pglite';
  /**
   * Subscribes to a NOTIFY channel (fan-out across API replicas); resolves to an unsubscribe function.
   * `onGap(false)` says the subscription dropped (notifications from then on are lost), `onGap(true)` that it
   * is back; a cache kept fresh by the channel must not trust itself in between.
   */
  listen(channel: string, onMessage: (payload: string) => void, onGap?: (listening: boolean) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
};

// node-postgres returns bigint (int8) and numeric as strings; our integers fit comfortably in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));
// A calendar date stays the 'YYYY-MM-DD' string it is; pg would make it local midnight of the process's zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (value) => value);

export async function openPostgres(connectionString: string, poolSize = 10): Promise<DatabaseHandle> {
  const pool = new pg.Pool({ connectionString, max: poolSize });
  // An idle pooled connection can die (database restart, failover, admin termination). That is not fatal:
  // the pool drops it and the next checkout connects afresh; without a listener Node would crash instead.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, kind: 'postgres', listen: (channel, onMessage, onGap) => listenOnPostgres(connectionString, channel, onMessage, onGap), close: () => db.destroy() };
}

const LISTEN_RETRY_MS = 1_000;

/**
 * LISTEN on a dedicated connection (a pooled one would lose it), reconnecting after a dropped connection
 * so a restarted database does not silently stop the event fan-out. TCP keep-alive makes a connection
 * that died silently (a vanished peer) an error too, instead of a LISTEN that hears nothing.
 */
async function listenOnPostgres(
  connectionString: string,
  channel: string,
  onMessage: (payload: string) => void,
  onGap: (listening: boolean) => void = () => {},
): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const retryLater = () => {
    if (!stopped) retry = setTimeout(() => void reconnect(), LISTEN_RETRY_MS);
  };
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString, keepAlive: true });
    next.on('notification', (message) => {
      if (message.channel === channel && message.payload !== undefined) onMessage(message.payload);
    });
    next.on('error', () => {
      void next.end().catch(() => {});
      if (client !== next) return;
      client = undefined;
      onGap(false);
      retryLater();
    });
    try {
      await next.connect();
      await next.query(`listen ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      void next.end().catch(() => {});
      throw error;
    }
    client = next;
  };
  const reconnect = async (): Promise<void> => {
    try {
      await connect();
      if (stopped) await client?.end().catch(() => {});
      else onGap(true);
    } catch {
      retryLater();
    }
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => {});
  };
}

/** The embedded database: PGlite persisted under DATA_DIR/postgres (in memory without one). It admits one process at a time. */
export async function openPGlite(dataDir: string | undefined): Promise<DatabaseHandle> {
  let directory: string | undefined;
  let fresh = true;
  if (dataDir) {
    directory = join(dataDir, 'postgres');
    await mkdir(directory, { recursive: true });
    fresh = !(await stat(join(directory, 'PG_VERSION')).then(() => true, () => false));
  }
  // A new database (in DATA_DIR or in memory) starts from the kept empty one (pglite-image.ts) rather than initdb.
  const image = fresh ? await emptyDatabaseImage() : undefined;
  const pglite = await PGlite.create({ ...(directory ? { dataDir: directory } : {}), ...(image ? { loadDataDir: image } : {}) });
  if (fresh && !image) await keepEmptyDatabaseImage(pglite);
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return {
    db,
    kind: 'pglite',
    // In-process: no connection to lose, so no gaps.
    listen: (channel, onMessage) => pglite.listen(channel, onMessage),
    close: async () => {
      await db.destroy();
      await pglite.close();
    },
  };
}

export async function migrateToLatest(db: Kysely<Database>): Promise<MigrationResultSet> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const result = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error');
    throw new Error(`Migration ${failed?.migrationName ?? '(unknown)'} failed: ${String(result.error)}`, {
      cause: result.error,
    });
  }
  return result;
}
