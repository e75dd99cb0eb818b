import type { Kysely } from 'kysely';
import type { ApiKey, Database, Scope } from '../db/schema.ts';

export class ApiKeyRepository {
  constructor(private readonly db: Kysely<Database>) {}

  create(key: { userId: string; name: string; displayPrefix: string; keyHash: string; scopes: Scope[] }): Promise<ApiKey> {
    return this.db
      .insertInto('api_keys')
      .values({
        user_id: key.userId,
        name: key.name,
        display_prefix: key.displayPrefix,
        key_hash: key.keyHash,
        scopes: key.scopes,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  findActiveByHash(keyHash: string): Promise<ApiKey | undefined> {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('key_hash', '=', keyHash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }

  async revoke(id: string, userId: string): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: new Date() })
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  listForUser(userId: string): Promise<ApiKey[]> {
    return this.db.selectFrom('api_keys').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc').execute();
  }
}
