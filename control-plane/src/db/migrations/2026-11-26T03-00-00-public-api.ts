import { sql, type Kysely } from 'kysely';

/**
 * The public API's shared state: rate-limit windows (shared by every API replica) and Idempotency-Key
 * records for POST /v1/videos.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table rate_limit_windows (
      bucket text not null,
      window_start timestamptz not null,
      hits integer not null check (hits > 0),
      primary key (bucket, window_start)
    )`.execute(db);

  await sql`
    create table idempotency_keys (
      user_id uuid not null references users (id) on delete cascade,
      key text not null check (length(key) between 1 and 255),
      request_hash text not null,
      response_status integer,
      response_body jsonb,
      created_at timestamptz not null default now(),
      primary key (user_id, key)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists idempotency_keys`.execute(db);
  await sql`drop table if exists rate_limit_windows`.execute(db);
}
