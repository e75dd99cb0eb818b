import { sql, type Kysely } from 'kysely';

/**
 * Where a `processing` video's render stands (RenderStage: preparing, queued for a render node, rendering) and
 * since when, so a video waiting for a render node is told apart from one rendering, and the wait is timed.
 * Null for videos that are not processing, and for those that were already processing before this migration.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table videos
      add column render_stage text constraint videos_render_stage_check check (render_stage in ('preparing', 'queued', 'rendering')),
      add column render_stage_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table videos drop column if exists render_stage, drop column if exists render_stage_at`.execute(db);
}
