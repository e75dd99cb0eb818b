import { sql, type Kysely } from 'kysely';

/**
 * Where in its audio a video begins, as its creator asked (POST /v1/videos `audio_start_seconds`); null: chosen when
 * the audio is prepared (the window with the most singing of a soundtrack longer than a video, else its start).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table videos
      add column audio_start_seconds double precision constraint videos_audio_start_seconds_check check (audio_start_seconds >= 0)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table videos drop column if exists audio_start_seconds`.execute(db);
}
