import { sql, type Kysely } from 'kysely';

/**
 * The output video's shape (`aspect` on every create surface): square 720×720, 4:5 720×900 or 9:16
 * 720×1280. Every render of the video (re-renders too) uses it; videos made before shapes existed are square.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table videos add column aspect text not null default 'square'
      constraint videos_aspect_check check (aspect in ('square', '4:5', '9:16'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table videos drop column if exists aspect`.execute(db);
}
