import { sql, type Kysely } from 'kysely';

/** Template songs are prepared for the model once, at seed time, instead of once per video. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table templates add column prepared_audio_key text`.execute(db);
  await sql`alter table templates add column prepared_audio_ms integer check (prepared_audio_ms > 0)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table templates drop column prepared_audio_ms`.execute(db);
  await sql`alter table templates drop column prepared_audio_key`.execute(db);
}
