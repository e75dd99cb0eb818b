import { sql, type Kysely } from 'kysely';

/**
 * The face a video is made with is the face its owner was shown. A checked photo keeps the version of the face
 * finder that found its face (images.face_model); a video made from a checked photo keeps that check
 * (videos.photo_check: {face, model}), which every render of it uses without detecting again; and each finished
 * render records where its face came from (videos.face_source, FaceSource) and whose landmarks it is
 * (videos.face_model). Null on rows from before: photos checked before versions were stored, videos made before
 * checks were kept (their renders find the face again, recorded as render_no_check), videos not yet rendered.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table images add column face_model text`.execute(db);
  await sql`
    alter table videos
      add column photo_check jsonb constraint videos_photo_check_check check (photo_check is null or jsonb_typeof(photo_check) = 'object'),
      add column face_source text constraint videos_face_source_check
        check (face_source in ('photo_check', 'given', 'render_no_check', 'render_model_changed')),
      add column face_model text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table videos drop column if exists photo_check, drop column if exists face_source, drop column if exists face_model`.execute(db);
  await sql`alter table images drop column if exists face_model`.execute(db);
}
