import { sql, type Kysely } from 'kysely';
import type { ApiKey, Database } from '../db/schema.ts';
import type { Scope } from '../domain/scopes.ts';

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

  /** Records uses of keys in one statement; a use older than the one recorded already changes nothing. */
  async touch(uses: readonly { id: string; at: Date }[]): Promise<void> {
    if (uses.length === 0) return;
    const rows = uses.map((use) => sql`(${use.id}::uuid, ${use.at}::timestamptz)`);
    await sql`
      update api_keys set last_used_at = used.at
      from (values ${sql.join(rows)}) as used (id, at)
      where api_keys.id = used.id and (api_keys.last_used_at is null or api_keys.last_used_at < used.at)`.execute(this.db);
  }

  /** Revokes an active key of the user; returns its hash (for the credential caches), undefined when there is none. */
  async revoke(id: string, userId: string): Promise<string | undefined> {
    const row = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: new Date() })
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .returning('key_hash')
      .executeTakeFirst();
    return row?.key_hash;
  }

  listForUser(userId: string): Promise<ApiKey[]> {
    return this.db.selectFrom('api_keys').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc').execute();
  }
}
