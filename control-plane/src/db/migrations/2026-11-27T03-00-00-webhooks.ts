import { sql, type Kysely } from 'kysely';

/**
 * Webhooks (Standard Webhooks) of the public API: an account's endpoints, its default secret (per-video
 * webhook_url), the videos' own webhook_url, and every delivery with its attempts. Signing secrets are
 * stored encrypted (AES-256-GCM under a key derived from the service's signing secret): they must be usable
 * to sign, so a hash would not do. One delivery per (video, event, target): the unique index makes the
 * emission of a video's event idempotent however often the activity that emits it is retried.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table webhook_endpoints (
      id uuid primary key default gen_random_uuid(),
      user_id uuid not null references users (id) on delete cascade,
      url text not null,
      events text[] not null,
      secret_ciphertext text not null,
      previous_secret_ciphertext text,
      previous_secret_expires_at timestamptz,
      failing_since timestamptz,
      disabled_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index webhook_endpoints_user_idx on webhook_endpoints (user_id, created_at)`.execute(db);
  await sql`
    create table webhook_account_secrets (
      user_id uuid primary key references users (id) on delete cascade,
      secret_ciphertext text not null,
      previous_secret_ciphertext text,
      previous_secret_expires_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`alter table videos add column webhook_url text`.execute(db);
  await sql`
    create table webhook_deliveries (
      id uuid primary key default gen_random_uuid(),
      user_id uuid not null references users (id) on delete cascade,
      endpoint_id uuid references webhook_endpoints (id) on delete cascade,
      target text not null,
      url text not null,
      video_id uuid references videos (id) on delete set null,
      event_type text not null,
      payload text not null,
      state text not null default 'pending' check (state in ('pending', 'delivered', 'failed')),
      attempts integer not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create unique index webhook_deliveries_once on webhook_deliveries (video_id, event_type, target)`.execute(db);
  await sql`create index webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id, created_at)`.execute(db);
  await sql`
    create table webhook_delivery_attempts (
      delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
      attempt integer not null check (attempt > 0),
      attempted_at timestamptz not null default now(),
      status_code integer,
      latency_ms integer not null,
      response_snippet text,
      error text,
      primary key (delivery_id, attempt)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists webhook_delivery_attempts`.execute(db);
  await sql`drop table if exists webhook_deliveries`.execute(db);
  await sql`alter table videos drop column if exists webhook_url`.execute(db);
  await sql`drop table if exists webhook_account_secrets`.execute(db);
  await sql`drop table if exists webhook_endpoints`.execute(db);
}
