import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, OauthAuthorizationCodesTable, OauthClientsTable, OauthTokensTable } from '../db/schema.ts';

export type OAuthClient = Selectable<OauthClientsTable>;
export type OAuthAuthorizationCode = Selectable<OauthAuthorizationCodesTable>;
export type NewOAuthAuthorizationCode = Insertable<OauthAuthorizationCodesTable>;
export type OAuthToken = Selectable<OauthTokensTable>;
export type NewOAuthToken = Insertable<OauthTokensTable>;

export class OAuthRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Runs `work` in one transaction, with a repository bound to it. */
  transaction<T>(work: (repository: OAuthRepository) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => work(new OAuthRepository(trx)));
  }

  createClient(client: Insertable<OauthClientsTable>): Promise<OAuthClient> {
    return this.db.insertInto('oauth_clients').values(client).returningAll().executeTakeFirstOrThrow();
  }

  findClient(id: string): Promise<OAuthClient | undefined> {
    return this.db.selectFrom('oauth_clients').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async createCode(code: NewOAuthAuthorizationCode): Promise<void> {
    await this.db.insertInto('oauth_authorization_codes').values(code).execute();
  }

  /**
   * Marks the code used and returns it, only the first time; under concurrency the row lock lets exactly
   * one caller win, and a loser waits for the winner's transaction, so it sees the tokens it issued.
   */
  consumeCode(codeHash: string, at: Date): Promise<OAuthAuthorizationCode | undefined> {
    return this.db
      .updateTable('oauth_authorization_codes')
      .set({ used_at: at })
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
  }

  findCode(codeHash: string): Promise<OAuthAuthorizationCode | undefined> {
    return this.db.selectFrom('oauth_authorization_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
  }

  async insertTokens(tokens: NewOAuthToken[]): Promise<void> {
    await this.db.insertInto('oauth_tokens').values(tokens).execute();
  }

  findActiveAccessToken(tokenHash: string, at: Date): Promise<OAuthToken | undefined> {
    return this.db
      .selectFrom('oauth_tokens')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .where('kind', '=', 'access')
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', at)
      .executeTakeFirst();
  }

  /** Marks a live refresh token used and returns it, only the first time (see consumeCode). */
  consumeRefreshToken(tokenHash: string, at: Date): Promise<OAuthToken | undefined> {
    return this.db
      .updateTable('oauth_tokens')
      .set({ used_at: at })
      .where('token_hash', '=', tokenHash)
      .where('kind', '=', 'refresh')
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', at)
      .returningAll()
      .executeTakeFirst();
  }

  findRefreshToken(tokenHash: string): Promise<OAuthToken | undefined> {
    return this.db.selectFrom('oauth_tokens').selectAll().where('token_hash', '=', tokenHash).where('kind', '=', 'refresh').executeTakeFirst();
  }

  /** Revokes the family's live tokens; returns their hashes (for the credential caches). */
  async revokeFamily(familyId: string, at: Date): Promise<string[]> {
    const rows = await this.db
      .updateTable('oauth_tokens')
      .set({ revoked_at: at })
      .where('family_id', '=', familyId)
      .where('revoked_at', 'is', null)
      .returning('token_hash')
      .execute();
    return rows.map((row) => row.token_hash);
  }

  /** Revokes every token descended from the code: those it issued and those their refreshes issued. Returns their hashes. */
  async revokeIssuedFromCode(codeHash: string, at: Date): Promise<string[]> {
    const rows = await this.db
      .updateTable('oauth_tokens')
      .set({ revoked_at: at })
      .where('family_id', 'in', (eb) => eb.selectFrom('oauth_tokens').select('family_id').where('authorization_code_hash', '=', codeHash))
      .where('revoked_at', 'is', null)
      .returning('token_hash')
      .execute();
    return rows.map((row) => row.token_hash);
  }
}
