import { sql, type Kysely } from 'kysely';

/**
 * One-time purchases made through Stripe Checkout: a video's watermark removal or an API credit pack.
 * A row is written when the checkout session is created (pending) and marked paid by the webhook. The
 * constraints make a paid purchase a durable fact that is acted on exactly once:
 * - paid_at is set exactly when status is paid, and fulfilled_at (credited, or re-render started) only then;
 * - a credit pack's ledger entry carries the checkout session id as its idempotency key, so the ledger's
 *   unique (user_id, idempotency_key) index refuses a second credit for the same payment.
 * A paid watermark removal is what lets a failed re-render be restarted without paying again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table purchases (
      id uuid primary key default gen_random_uuid(),
      checkout_session_id text not null unique,
      user_id uuid not null references users (id) on delete cascade,
      kind text not null check (kind in ('watermark_removal', 'credit_pack')),
      -- nullable only so that deleting the video keeps the payment record
      video_id uuid references videos (id) on delete set null,
      pack text check (pack in ('starter', 'growth', 'scale')),
      credits integer check (credits > 0),
      amount integer not null check (amount >= 0),
      currency text not null check (currency ~ '^[a-z]{3}$'),
      status text not null default 'pending' check (status in ('pending', 'paid', 'expired')),
      paid_at timestamptz,
      fulfilled_at timestamptz,
      created_at timestamptz not null default now(),
      check (kind <> 'credit_pack' or (pack is not null and credits is not null and video_id is null)),
      check (kind <> 'watermark_removal' or (pack is null and credits is null)),
      check ((status = 'paid') = (paid_at is not null)),
      check (fulfilled_at is null or status = 'paid')
    )`.execute(db);
  await sql`create index purchases_video_idx on purchases (video_id) where video_id is not null`.execute(db);
  await sql`create index purchases_user_created_idx on purchases (user_id, created_at desc)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists purchases`.execute(db);
}
