import { sql, type Kysely } from 'kysely';

/**
 * Render orchestration: where an API video's photo comes from, and a once-only marker for giving back
 * the credit of a failed render (the ledger's unique index covers API credits; this covers free credits).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table videos add column source_image_url text`.execute(db);
  await sql`alter table videos add column credit_returned_at timestamptz`.execute(db);
  await sql`alter table videos add check (image_key is not null or source_image_url is not null)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table videos drop column credit_returned_at`.execute(db);
  await sql`alter table videos drop column source_image_url`.execute(db);
}
