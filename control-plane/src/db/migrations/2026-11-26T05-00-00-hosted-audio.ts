import { sql, type Kysely } from 'kysely';

/**
 * Audio the service produced for a user (synthesized speech, an extracted soundtrack), hosted so the web
 * app can play it and pass its URL to POST /create-with-audio instead of uploading it again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table hosted_audio (
      id uuid primary key default gen_random_uuid(),
      user_id uuid not null references users (id) on delete cascade,
      source text not null check (source in ('tts', 'social')),
      object_key text not null unique,
      duration_ms integer not null check (duration_ms > 0),
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index hosted_audio_user_idx on hosted_audio (user_id, created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists hosted_audio`.execute(db);
}
