import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../../test/support/database.ts';
import { databaseBackends } from '../../test/support/database.ts';

/** Every invariant the schema promises, proven by a write that would break it — on Postgres and on PGlite. */
describe.each(databaseBackends)('database constraints on $name', ({ create }) => {
  let database: TestDatabase;
  let userId: string;
  let otherUserId: string;
  let counter = 0;

  const newUser = async () =>
    (
      await database.db
        .insertInto('users')
        .values({ email: `user${++counter}-${Date.now()}@example.com`, unsubscribe_token_hash: `hash-${counter}-${Math.random()}` })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;

  const newVideo = async (owner: string, values: Partial<{ origin: 'web' | 'api'; payment: 'api_credit' | 'free_credit' | 'subscription'; has_watermark: boolean }> = {}) =>
    (
      await database.db
        .insertInto('videos')
        .values({ user_id: owner, origin: 'api', payment: 'api_credit', status: 'processing', has_watermark: false, image_key: 'videos/test/image.png', ...values })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;

  const ledger = (values: { user_id: string; delta: number; reason: 'purchase' | 'video_create' | 'refund' | 'grant'; video_id?: string | null; idempotency_key?: string }) =>
    database.db.insertInto('credit_ledger').values(values).execute();

  const balance = async (user: string) =>
    (await database.db.selectFrom('credit_balances').select('balance').where('user_id', '=', user).executeTakeFirst())?.balance ?? 0;

  beforeAll(async () => {
    database = await create();
    userId = await newUser();
    otherUserId = await newUser();
  });
  afterAll(() => database.drop());

  it('keeps the balance equal to the sum of the ledger', async () => {
    await ledger({ user_id: userId, delta: 3, reason: 'grant' });
    await ledger({ user_id: userId, delta: 2, reason: 'purchase' });
    const video = await newVideo(userId);
    await ledger({ user_id: userId, delta: -1, reason: 'video_create', video_id: video });
    const sum = await database.db.selectFrom('credit_ledger').select(sql<number>`sum(delta)::int`.as('sum')).where('user_id', '=', userId).executeTakeFirstOrThrow();
    expect(await balance(userId)).toBe(4);
    expect(sum.sum).toBe(4);
  });

  it('refuses a spend that would make the balance negative', async () => {
    const poor = await newUser();
    const video = await newVideo(poor);
    await expect(ledger({ user_id: poor, delta: -1, reason: 'video_create', video_id: video })).rejects.toMatchObject({ code: '23514' });
    expect(await balance(poor)).toBe(0);
  });

  it('charges a video at most once', async () => {
    const video = await newVideo(userId);
    await ledger({ user_id: userId, delta: -1, reason: 'video_create', video_id: video });
    await expect(ledger({ user_id: userId, delta: -1, reason: 'video_create', video_id: video })).rejects.toMatchObject({ code: '23505' });
  });

  it('refunds a video at most once, and only a charged one', async () => {
    const video = await newVideo(userId);
    await expect(ledger({ user_id: userId, delta: 1, reason: 'refund', video_id: video })).rejects.toMatchObject({ code: '23514' });
    await ledger({ user_id: userId, delta: -1, reason: 'video_create', video_id: video });
    await ledger({ user_id: userId, delta: 1, reason: 'refund', video_id: video });
    await expect(ledger({ user_id: userId, delta: 1, reason: 'refund', video_id: video })).rejects.toMatchObject({ code: '23505' });
  });

  it('fixes the sign and size of each ledger reason', async () => {
    const video = await newVideo(userId);
    await expect(ledger({ user_id: userId, delta: -2, reason: 'video_create', video_id: video })).rejects.toMatchObject({ code: '23514' });
    await expect(ledger({ user_id: userId, delta: -5, reason: 'grant' })).rejects.toMatchObject({ code: '23514' });
    await expect(ledger({ user_id: userId, delta: 0, reason: 'purchase' })).rejects.toMatchObject({ code: '23514' });
    await expect(ledger({ user_id: userId, delta: 1, reason: 'bonus' as 'grant' })).rejects.toMatchObject({ code: '23514' });
  });

  it('keeps the ledger append-only', async () => {
    await expect(database.db.updateTable('credit_ledger').set({ delta: 100 }).where('user_id', '=', userId).execute()).rejects.toMatchObject({ code: '23514' });
    await expect(database.db.deleteFrom('credit_ledger').where('user_id', '=', userId).execute()).rejects.toMatchObject({ code: '23514' });
  });

  it('keeps ledger entries when their video is deleted', async () => {
    const video = await newVideo(userId);
    await ledger({ user_id: userId, delta: -1, reason: 'video_create', video_id: video });
    const before = await balance(userId);
    await database.db.deleteFrom('videos').where('id', '=', video).execute();
    expect(await balance(userId)).toBe(before);
    const orphan = await database.db.selectFrom('credit_ledger').select('video_id').where('user_id', '=', userId).where('reason', '=', 'video_create').orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(orphan.video_id).toBeNull();
  });

  it('rejects a duplicate ledger idempotency key for the same user', async () => {
    await ledger({ user_id: otherUserId, delta: 5, reason: 'purchase', idempotency_key: 'checkout-1' });
    await expect(ledger({ user_id: otherUserId, delta: 5, reason: 'purchase', idempotency_key: 'checkout-1' })).rejects.toMatchObject({ code: '23505' });
  });

  it('never lets free credits go below zero or above two', async () => {
    await expect(database.db.updateTable('users').set({ free_credits: -1 }).where('id', '=', userId).execute()).rejects.toMatchObject({ code: '23514' });
    await expect(database.db.updateTable('users').set({ free_credits: 3 }).where('id', '=', userId).execute()).rejects.toMatchObject({ code: '23514' });
  });

  it('treats email addresses case-insensitively as unique', async () => {
    await database.db.insertInto('users').values({ email: 'Case@Example.com', unsubscribe_token_hash: 'case-1' }).execute();
    await expect(database.db.insertInto('users').values({ email: 'case@example.COM', unsubscribe_token_hash: 'case-2' }).execute()).rejects.toMatchObject({ code: '23505' });
  });

  it('keeps API videos paid by credit and free of watermarks, and completed videos with an output', async () => {
    await expect(newVideo(userId, { origin: 'api', payment: 'free_credit' })).rejects.toMatchObject({ code: '23514' });
    await expect(newVideo(userId, { origin: 'api', has_watermark: true })).rejects.toMatchObject({ code: '23514' });
    await expect(
      database.db.insertInto('videos').values({ user_id: userId, origin: 'web', payment: 'free_credit', status: 'completed', has_watermark: true, image_key: 'videos/test/image.png' }).execute(),
    ).rejects.toMatchObject({ code: '23514' });
  });

  it('enforces foreign keys', async () => {
    await expect(newVideo('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ code: '23503' });
    await expect(ledger({ user_id: '00000000-0000-4000-8000-000000000000', delta: 1, reason: 'grant' })).rejects.toMatchObject({ code: '23503' });
  });

  it('accepts only known scopes on API keys and S256 on authorization codes', async () => {
    await expect(
      database.db.insertInto('api_keys').values({ user_id: userId, display_prefix: 'psk_live_x', key_hash: 'h1', scopes: ['videos:admin' as 'videos:read'] }).execute(),
    ).rejects.toMatchObject({ code: '23514' });
    await database.db.insertInto('oauth_clients').values({ id: 'client-1', client_name: 'c', redirect_uris: ['https://app.example/cb'], grant_types: ['authorization_code'] }).execute();
    await expect(
      database.db
        .insertInto('oauth_authorization_codes')
        .values({ code_hash: 'c1', client_id: 'client-1', user_id: userId, redirect_uri: 'https://app.example/cb', scopes: ['videos:read'], code_challenge: 'x', code_challenge_method: 'plain' as 'S256', expires_at: new Date() })
        .execute(),
    ).rejects.toMatchObject({ code: '23514' });
  });

  it('keeps checked photos with a size, an expiry after their creation and a face object (or none), and face hints as an object', async () => {
    const image = (values: Partial<{ width: number; face: string | null; expires_at: Date }>) =>
      database.db
        .insertInto('images')
        .values({ id: crypto.randomUUID(), user_id: userId, object_key: `images/${crypto.randomUUID()}.png`, width: 10, height: 10, face: null, expires_at: new Date(Date.now() + 60_000), ...values })
        .execute();
    await image({ face: JSON.stringify({ confidence: 0.5 }) });
    await expect(image({ width: 0 })).rejects.toMatchObject({ code: '23514' });
    await expect(image({ expires_at: new Date(Date.now() - 60_000) })).rejects.toMatchObject({ code: '23514' });
    await expect(image({ face: '[1, 2]' })).rejects.toMatchObject({ code: '23514' });
    const video = await newVideo(userId);
    await expect(database.db.updateTable('videos').set({ face_hints: '"mouth"' }).where('id', '=', video).execute()).rejects.toMatchObject({ code: '23514' });
  });

  it('makes a video square unless told otherwise, and accepts only the three shapes', async () => {
    const video = await newVideo(userId);
    const aspectOf = async () => (await database.db.selectFrom('videos').select('aspect').where('id', '=', video).executeTakeFirstOrThrow()).aspect;
    expect(await aspectOf()).toBe('square');
    for (const aspect of ['4:5', '9:16', 'square'] as const) {
      await database.db.updateTable('videos').set({ aspect }).where('id', '=', video).execute();
      expect(await aspectOf()).toBe(aspect);
    }
    for (const aspect of ['16:9', 'Square', '']) {
      await expect(database.db.updateTable('videos').set({ aspect: aspect as 'square' }).where('id', '=', video).execute()).rejects.toMatchObject({ code: '23514' });
    }
    await expect(database.db.updateTable('videos').set({ aspect: null as unknown as 'square' }).where('id', '=', video).execute()).rejects.toMatchObject({ code: '23502' });
  });

  it('stores a payment-provider event once', async () => {
    await database.db.insertInto('payment_events').values({ id: 'evt_1', type: 'checkout.session.completed', object_created_at: new Date() }).execute();
    await expect(database.db.insertInto('payment_events').values({ id: 'evt_1', type: 'checkout.session.completed', object_created_at: new Date() }).execute()).rejects.toMatchObject({ code: '23505' });
  });

  it('serializes concurrent spends so the balance is never overdrawn', async () => {
    const spender = await newUser();
    await ledger({ user_id: spender, delta: 3, reason: 'grant' });
    const videos = await Promise.all(Array.from({ length: 10 }, () => newVideo(spender)));
    const results = await Promise.allSettled(videos.map((video) => ledger({ user_id: spender, delta: -1, reason: 'video_create', video_id: video })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(await balance(spender)).toBe(0);
  });
});
