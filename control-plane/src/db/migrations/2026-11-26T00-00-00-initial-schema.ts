import { sql, type Kysely } from 'kysely';

/**
 * The initial schema. Every invariant the database can hold is a constraint here, so no code path
 * (a bug, a retried activity, a concurrent request, an operator with psql) can break it:
 * - credit_ledger is append-only; a trigger keeps credit_balances in step with it and the balance's
 *   CHECK (>= 0) rejects any entry that would overdraw, under any concurrency (the balance row lock
 *   serializes spenders);
 * - at most one charge and at most one refund per video, and a refund only for a charged video;
 * - free web credits never go below zero.
 * Landed migrations are never edited; add a new file instead.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table users (
      id uuid primary key default gen_random_uuid(),
      identity_subject text unique,
      email text not null,
      email_opt_out boolean not null default false,
      unsubscribe_token_hash text not null unique,
      subscription_status text not null default 'none'
        check (subscription_status in ('none', 'active', 'trialing', 'past_due', 'canceled', 'unpaid', 'incomplete')),
      subscription_id text unique,
      subscription_plan text check (subscription_plan in ('weekly', 'annual')),
      subscription_current_period_end timestamptz,
      subscription_cancel_at_period_end boolean not null default false,
      subscription_updated_at timestamptz,
      payment_customer_id text unique,
      free_credits integer not null default 2 check (free_credits between 0 and 2),
      free_credits_month date not null default date_trunc('month', now() at time zone 'utc')::date,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create unique index users_email_key on users (lower(email))`.execute(db);

  await sql`
    create table templates (
      id integer primary key check (id > 0),
      name text not null unique,
      description text not null default '',
      audio_key text not null,
      audio_duration_ms integer not null check (audio_duration_ms > 0),
      preview_image_key text,
      preview_video_key text,
      created_at timestamptz not null default now()
    )`.execute(db);

  await sql`
    create table videos (
      id uuid primary key default gen_random_uuid(),
      user_id uuid not null references users (id) on delete cascade,
      origin text not null check (origin in ('web', 'api')),
      payment text not null check (payment in ('api_credit', 'free_credit', 'subscription')),
      template_id integer references templates (id),
      status text not null check (status in ('pending', 'processing', 'completed', 'failed')),
      progress integer not null default 0 check (progress between 0 and 100),
      image_key text,
      audio_key text,
      output_key text,
      thumbnail_key text,
      has_watermark boolean not null,
      failure_code text,
      failure_reason text,
      workflow_id text unique,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      completed_at timestamptz,
      check (origin = 'web' or payment = 'api_credit'),
      check (origin = 'web' or has_watermark = false),
      check (status <> 'completed' or output_key is not null)
    )`.execute(db);
  await sql`create index videos_user_created_idx on videos (user_id, created_at desc, id desc)`.execute(db);

  await sql`
    create table credit_balances (
      user_id uuid primary key references users (id) on delete cascade,
      balance integer not null default 0 check (balance >= 0)
    )`.execute(db);

  await sql`
    create table credit_ledger (
      id bigint generated always as identity primary key,
      user_id uuid not null references users (id) on delete cascade,
      delta integer not null check (delta <> 0),
      reason text not null check (reason in ('purchase', 'video_create', 'refund', 'grant')),
      video_id uuid references videos (id) on delete set null,
      idempotency_key text,
      created_at timestamptz not null default now(),
      check (reason <> 'video_create' or delta = -1),
      check (reason <> 'refund' or delta = 1),
      check (reason not in ('purchase', 'grant') or delta > 0)
    )`.execute(db);
  await sql`create index credit_ledger_user_created_idx on credit_ledger (user_id, created_at desc, id desc)`.execute(db);
  await sql`create unique index credit_ledger_one_charge_per_video on credit_ledger (video_id) where reason = 'video_create'`.execute(db);
  await sql`create unique index credit_ledger_one_refund_per_video on credit_ledger (video_id) where reason = 'refund'`.execute(db);
  await sql`create unique index credit_ledger_idempotency_key on credit_ledger (user_id, idempotency_key) where idempotency_key is not null`.execute(db);

  await sql`
    create function credit_ledger_apply() returns trigger language plpgsql as $$
    begin
      if new.reason = 'refund' and not exists (
        select 1 from credit_ledger where video_id = new.video_id and reason = 'video_create' and user_id = new.user_id
      ) then
        raise exception 'refund for video % without a matching charge', new.video_id using errcode = '23514';
      end if;
      insert into credit_balances (user_id, balance) values (new.user_id, 0) on conflict (user_id) do nothing;
      update credit_balances set balance = balance + new.delta where user_id = new.user_id;
      return new;
    end $$`.execute(db);
  await sql`create trigger credit_ledger_apply after insert on credit_ledger for each row execute function credit_ledger_apply()`.execute(db);
  await sql`
    create function credit_ledger_append_only() returns trigger language plpgsql as $$
    begin
      if tg_op = 'UPDATE' and new.video_id is null and old.video_id is not null
        and (new.user_id, new.delta, new.reason, new.created_at) = (old.user_id, old.delta, old.reason, old.created_at) then
        return new; -- a deleted video unlinks its entries (on delete set null); the entries themselves stay
      end if;
      if tg_op = 'DELETE' and not exists (select 1 from users where id = old.user_id) then
        return old; -- the account itself is being removed
      end if;
      raise exception 'credit_ledger is append-only' using errcode = '23514';
    end $$`.execute(db);
  await sql`create trigger credit_ledger_append_only before update or delete on credit_ledger for each row execute function credit_ledger_append_only()`.execute(db);

  await sql`
    create table api_keys (
      id uuid primary key default gen_random_uuid(),
      user_id uuid not null references users (id) on delete cascade,
      name text not null default '',
      display_prefix text not null,
      key_hash text not null unique,
      scopes text[] not null check (cardinality(scopes) > 0 and scopes <@ array['videos:read', 'videos:write']::text[]),
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      revoked_at timestamptz
    )`.execute(db);
  await sql`create index api_keys_user_idx on api_keys (user_id)`.execute(db);

  await sql`
    create table oauth_clients (
      id text primary key,
      client_name text not null,
      redirect_uris text[] not null check (cardinality(redirect_uris) > 0),
      grant_types text[] not null,
      token_endpoint_auth_method text not null default 'none',
      client_secret_hash text,
      metadata jsonb not null default '{}'::jsonb,
      created_at timestamptz not null default now()
    )`.execute(db);

  await sql`
    create table oauth_authorization_codes (
      code_hash text primary key,
      client_id text not null references oauth_clients (id) on delete cascade,
      user_id uuid not null references users (id) on delete cascade,
      redirect_uri text not null,
      scopes text[] not null,
      code_challenge text not null,
      code_challenge_method text not null check (code_challenge_method = 'S256'),
      resource text,
      expires_at timestamptz not null,
      used_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db);

  await sql`
    create table oauth_tokens (
      id uuid primary key default gen_random_uuid(),
      token_hash text not null unique,
      kind text not null check (kind in ('access', 'refresh')),
      client_id text not null references oauth_clients (id) on delete cascade,
      user_id uuid not null references users (id) on delete cascade,
      scopes text[] not null,
      family_id uuid not null,
      authorization_code_hash text,
      expires_at timestamptz not null,
      used_at timestamptz,
      revoked_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index oauth_tokens_family_idx on oauth_tokens (family_id)`.execute(db);
  await sql`create index oauth_tokens_code_idx on oauth_tokens (authorization_code_hash)`.execute(db);

  await sql`
    create table payment_events (
      id text primary key,
      type text not null,
      object_created_at timestamptz not null,
      processed_at timestamptz not null default now()
    )`.execute(db);

  await sql`
    create table email_outbox (
      id uuid primary key default gen_random_uuid(),
      user_id uuid references users (id) on delete set null,
      dedupe_key text not null unique,
      kind text not null,
      to_address text not null,
      subject text not null,
      text_body text not null,
      headers jsonb not null default '{}'::jsonb,
      status text not null default 'pending' check (status in ('pending', 'sent', 'failed')),
      attempts integer not null default 0 check (attempts >= 0),
      last_error text,
      created_at timestamptz not null default now(),
      sent_at timestamptz
    )`.execute(db);
  await sql`create index email_outbox_pending_idx on email_outbox (created_at) where status = 'pending'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'email_outbox', 'payment_events', 'oauth_tokens', 'oauth_authorization_codes', 'oauth_clients',
    'api_keys', 'credit_ledger', 'credit_balances', 'videos', 'templates', 'users',
  ]) {
    await sql`drop table if exists ${sql.table(table)} cascade`.execute(db);
  }
  await sql`drop function if exists credit_ledger_apply cascade`.execute(db);
  await sql`drop function if exists credit_ledger_append_only cascade`.execute(db);
}
