import { sql, type Kysely } from 'kysely';

/**
 * Photos checked before anyone pays (POST /v1/images, POST /images): stored for a limited time with what
 * a render node found on them (face null: no pet face). And the person's corrections of the face on each
 * video (`face` of every create surface), which every render of the video uses.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table images (
      id uuid primary key,
      user_id uuid not null references users (id) on delete cascade,
      object_key text not null unique,
      width integer not null check (width > 0),
      height integer not null check (height > 0),
      face jsonb check (face is null or jsonb_typeof(face) = 'object'),
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      check (expires_at > created_at)
    )`.execute(db);
  await sql`create index images_expires_idx on images (expires_at)`.execute(db);
  await sql`alter table videos add column face_hints jsonb check (face_hints is null or jsonb_typeof(face_hints) = 'object')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table videos drop column if exists face_hints`.execute(db);
  await sql`drop table if exists images`.execute(db);
}
