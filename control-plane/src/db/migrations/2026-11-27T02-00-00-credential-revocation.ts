import { sql, type Kysely } from 'kysely';

/**
 * Every API replica keeps verified credentials for a few seconds (CredentialCache). The database itself
 * announces a revoked or deleted API key or OAuth token (NOTIFY credential_revoked, payload: its hash), so
 * a revocation made anywhere, by the service or by hand in SQL, reaches every replica's cache.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function notify_credential_revoked() returns trigger language plpgsql as $$
    begin
      perform pg_notify('credential_revoked', to_jsonb(old) ->> tg_argv[0]);
      return null;
    end $$`.execute(db);
  for (const [table, column] of [['api_keys', 'key_hash'], ['oauth_tokens', 'token_hash']] as const) {
    await sql`
      create trigger ${sql.raw(`${table}_revoked`)} after update of revoked_at on ${sql.table(table)}
      for each row when (old.revoked_at is null and new.revoked_at is not null)
      execute function notify_credential_revoked(${sql.lit(column)})`.execute(db);
    await sql`
      create trigger ${sql.raw(`${table}_deleted`)} after delete on ${sql.table(table)}
      for each row execute function notify_credential_revoked(${sql.lit(column)})`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['api_keys', 'oauth_tokens']) {
    await sql`drop trigger if exists ${sql.raw(`${table}_revoked`)} on ${sql.table(table)}`.execute(db);
    await sql`drop trigger if exists ${sql.raw(`${table}_deleted`)} on ${sql.table(table)}`.execute(db);
  }
  await sql`drop function if exists notify_credential_revoked()`.execute(db);
}
