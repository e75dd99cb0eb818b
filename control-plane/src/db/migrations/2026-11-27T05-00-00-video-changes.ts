import { sql, type Kysely } from 'kysely';

/**
 * Every API replica keeps the videos it was asked for (VideoService, NotifiedCache), so a poll does not read
 * Postgres each time. The database announces every change of a video row, whoever makes it (a worker, an API
 * replica, a cascade from a deleted account, SQL by hand): NOTIFY video_changed, payload the video id.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function notify_video_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('video_changed', old.id::text);
      return null;
    end $$`.execute(db);
  await sql`
    create trigger videos_changed after update or delete on videos
    for each row execute function notify_video_changed()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists videos_changed on videos`.execute(db);
  await sql`drop function if exists notify_video_changed()`.execute(db);
}
