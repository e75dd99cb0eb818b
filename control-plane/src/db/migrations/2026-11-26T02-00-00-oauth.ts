import { sql, type Kysely } from 'kysely';

/**
 * OAuth authorization server: tokens remember the resource (RFC 8707) their code was bound to, so a
 * refresh cannot widen the audience; scopes are limited to the known ones, as they are for API keys.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table oauth_tokens add column resource text`.execute(db);
  for (const table of ['oauth_tokens', 'oauth_authorization_codes']) {
    await sql`alter table ${sql.table(table)} add constraint ${sql.id(`${table}_scopes_known`)} check (cardinality(scopes) > 0 and scopes <@ array['videos:read', 'videos:write']::text[])`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['oauth_tokens', 'oauth_authorization_codes']) {
    await sql`alter table ${sql.table(table)} drop constraint ${sql.id(`${table}_scopes_known`)}`.execute(db);
  }
  await sql`alter table oauth_tokens drop column resource`.execute(db);
}
