import type { Kysely } from 'kysely';
import type { Database, HostedAudio } from '../db/schema.ts';

export class HostedAudioRepository {
  constructor(private readonly db: Kysely<Database>) {}

  insert(row: { id: string; user_id: string; source: HostedAudio['source']; object_key: string; duration_ms: number; expires_at: Date }): Promise<HostedAudio> {
    return this.db.insertInto('hosted_audio').values(row).returningAll().executeTakeFirstOrThrow();
  }

  findById(id: string): Promise<HostedAudio | undefined> {
    return this.db.selectFrom('hosted_audio').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findOwned(id: string, userId: string): Promise<HostedAudio | undefined> {
    return this.db.selectFrom('hosted_audio').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  }

  listExpired(now: Date, limit: number): Promise<Pick<HostedAudio, 'id' | 'object_key'>[]> {
    return this.db.selectFrom('hosted_audio').select(['id', 'object_key']).where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute();
  }

  async delete(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.db.deleteFrom('hosted_audio').where('id', 'in', ids).execute();
  }
}
