import type { Kysely } from 'kysely';
import type { FoundFace } from '@petsing/workflows';
import type { Database, Image } from '../db/schema.ts';

export class ImageRepository {
  constructor(private readonly db: Kysely<Database>) {}

  insert(row: { id: string; user_id: string; object_key: string; width: number; height: number; face: FoundFace | null; face_model: string | null; expires_at: Date }): Promise<Image> {
    return this.db
      .insertInto('images')
      .values({ ...row, face: row.face === null ? null : JSON.stringify(row.face) })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** The user's image, unless it has expired (a sweep may not have removed it yet). */
  findUsable(id: string, userId: string, now: Date): Promise<Image | undefined> {
    return this.db
      .selectFrom('images')
      .selectAll()
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  }

  listExpired(now: Date, limit: number): Promise<Pick<Image, 'id' | 'object_key'>[]> {
    return this.db.selectFrom('images').select(['id', 'object_key']).where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute();
  }

  async delete(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.db.deleteFrom('images').where('id', 'in', ids).execute();
  }
}
