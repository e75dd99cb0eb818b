import type { Kysely } from 'kysely';
import type { Database, Template } from '../db/schema.ts';

export class TemplateRepository {
  constructor(private readonly db: Kysely<Database>) {}

  listOldestFirst(): Promise<Template[]> {
    return this.db.selectFrom('templates').selectAll().orderBy('id', 'asc').execute();
  }

  findById(id: number): Promise<Template | undefined> {
    return this.db.selectFrom('templates').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Inserts or refreshes a seeded template; seeding twice leaves one row per id. */
  async upsert(template: Omit<Template, 'created_at' | 'preview_video_key' | 'prepared_audio_key' | 'prepared_audio_ms'>): Promise<void> {
    await this.db
      .insertInto('templates')
      .values(template)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet({
          name: template.name,
          description: template.description,
          audio_key: template.audio_key,
          audio_duration_ms: template.audio_duration_ms,
          preview_image_key: template.preview_image_key,
        }),
      )
      .execute();
  }

  async setPreparedAudio(id: number, key: string, durationMs: number): Promise<void> {
    await this.db.updateTable('templates').set({ prepared_audio_key: key, prepared_audio_ms: durationMs }).where('id', '=', id).execute();
  }

  async setPreviewVideo(id: number, key: string): Promise<void> {
    await this.db.updateTable('templates').set({ preview_video_key: key }).where('id', '=', id).execute();
  }
}
