import { sql, type Kysely } from 'kysely';

/**
 * Each video's sync report (VideoSync, recorded when a render completes): whether the audio holds a singing voice, how
 * closely the mouth followed it, the share of band-only frames with the mouth at rest, and the window of the source
 * audio sung. Null on videos not yet rendered, and on renders by nodes older than the report.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table videos
      add column sync jsonb constraint videos_sync_check check (sync is null or jsonb_typeof(sync) = 'object')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table videos drop column if exists sync`.execute(db);
}
