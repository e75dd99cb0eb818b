import { sql, type Kysely } from 'kysely';

/**
 * Audio on /v1 (POST /v1/audio): hosted audio can be an upload too, is usable for creates for a day
 * (`expires_at`; rows made before keep a day from their creation), and a video records the hosted audio it
 * was made from (`audio_id`, no foreign key: the video keeps its own copy of the sound when the audio goes).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table hosted_audio add column expires_at timestamptz`.execute(db);
  await sql`update hosted_audio set expires_at = created_at + interval '24 hours'`.execute(db);
  await sql`alter table hosted_audio alter column expires_at set not null`.execute(db);
  await sql`alter table hosted_audio drop constraint if exists hosted_audio_source_check`.execute(db);
  await sql`alter table hosted_audio add constraint hosted_audio_source_check check (source in ('tts', 'social', 'upload'))`.execute(db);
  await sql`alter table videos add column audio_id uuid`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table videos drop column if exists audio_id`.execute(db);
  await sql`delete from hosted_audio where source = 'upload'`.execute(db);
  await sql`alter table hosted_audio drop constraint if exists hosted_audio_source_check`.execute(db);
  await sql`alter table hosted_audio add constraint hosted_audio_source_check check (source in ('tts', 'social'))`.execute(db);
  await sql`alter table hosted_audio drop column if exists expires_at`.execute(db);
}
