import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { loadControlPlaneConfig } from '../src/config/env.ts';
import { openPostgres } from '../src/db/database.ts';
import { createLogger } from '../src/logging/logger.ts';
import { startApiServer } from '../src/runtime/api-server.ts';
import { openAppContext } from '../src/runtime/bootstrap.ts';
import { VIDEO_STATUS_CHANNEL } from '../src/repositories/video.repository.ts';
import { ACCESS_TOKEN_PREFIX } from '../src/services/oauth-tokens.ts';
import { hashSecret, randomToken } from '../src/services/secrets.ts';
import { json } from '../../test/support/http.ts';
import { captureLines } from '../../test/support/log-capture.ts';
import { awayFromWindowEdge } from '../../test/support/accounts.ts';
import { freePort, startProcess, stopProcess, waitFor } from '../../test/support/processes.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';

const READS_PER_MINUTE = 5;
/** The default CREDENTIAL_CACHE_TTL_SECONDS: the documented bound on a revocation a replica did not hear of. */
const CACHE_TTL_SECONDS = 5;

type Replica = { baseUrl: string; context: Awaited<ReturnType<typeof openAppContext>>; logLines: string[]; stop(): Promise<void> };

/**
 * API replicas as production runs them: each its own process state (credential cache, limiter client,
 * database pool, LISTEN connection), all sharing one Postgres database and, when given, one Redis.
 */
describe('the /v1 read path across replicas', () => {
  let primary: TestService;
  let redis: { url: string; port: number; process: ChildProcess };
  const replicas: Replica[] = [];

  async function startReplica(env: Record<string, string> = {}): Promise<Replica> {
    const port = await freePort();
    const config = loadControlPlaneConfig({ ...primary.env, PORT: String(port), ...env });
    const { lines, sink } = captureLines();
    const database = await openPostgres(primary.database.url!, 4);
    const context = await openAppContext(config, createLogger('info', 'petsing', sink), { database });
    const api = await startApiServer(context, port);
    const replica: Replica = {
      baseUrl: config.baseUrl,
      context,
      logLines: lines,
      stop: async () => {
        await api.close();
        await context.close();
        await database.close();
      },
    };
    replicas.push(replica);
    return replica;
  }

  async function startRedis(port: number) {
    const child = startProcess('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], 'redis-server');
    const url = `redis://127.0.0.1:${port}`;
    await waitFor('redis-server', () => canConnect(port), 10_000);
    return { url, port, process: child };
  }

  beforeAll(async () => {
    const port = await freePort();
    redis = await startRedis(port);
    primary = await startTestService({ env: { REDIS_URL: redis.url, RATE_LIMIT_READS_PER_MINUTE: String(READS_PER_MINUTE) } });
  });
  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
    await primary?.stop();
    await stopProcess(redis?.process);
  });

  const get = (baseUrl: string, key: string, path = '/v1/me') => fetch(`${baseUrl}${path}`, { headers: { Authorization: `Bearer ${key}` } });

  async function newKey(email: string) {
    const user = await primary.context.services.users.create({ email });
    const { key, record } = await primary.context.services.apiKeys.create({ userId: user.id, scopes: ['videos:read'] });
    return { key, record, userId: user.id };
  }

  it('a key revoked on one replica is refused by another within a second (NOTIFY), well inside the cache TTL', async () => {
    const other = await startReplica({ RATE_LIMIT_READS_PER_MINUTE: '1000' });
    const { key, record, userId } = await newKey('revoke-notify@example.com');
    expect((await get(other.baseUrl, key)).status).toBe(200);
    expect((await get(other.baseUrl, key)).status).toBe(200); // now from the replica's cache

    await primary.context.services.apiKeys.revoke(userId, record.id);
    const revokedAt = Date.now();
    await waitFor('the revocation to reach the other replica', async () => (await get(other.baseUrl, key)).status === 401, CACHE_TTL_SECONDS * 1000);
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
  });

  it('a replica that missed the notification refuses a revoked key once its cache entry expires (the TTL bound)', async () => {
    const other = await startReplica({ RATE_LIMIT_READS_PER_MINUTE: '1000', CREDENTIAL_CACHE_TTL_SECONDS: '2' });
    const { key, record } = await newKey('revoke-silent@example.com');
    expect((await get(other.baseUrl, key)).status).toBe(200);
    const cachedAt = Date.now();

    // Revoked by hand with triggers off (session_replication_role = replica): no NOTIFY reaches anyone.
    await primary.database.db.connection().execute(async (connection) => {
      await sql`set session_replication_role = replica`.execute(connection);
      await connection.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', record.id).execute();
      await sql`set session_replication_role = origin`.execute(connection);
    });
    expect((await get(other.baseUrl, key)).status).toBe(200); // the replica trusts its cache...
    await waitFor('the cache entry to expire', async () => (await get(other.baseUrl, key)).status === 401, 5_000);
    expect(Date.now() - cachedAt).toBeLessThan(2_000 + 1_000); // ...for at most the TTL
    expect((await get(primary.baseUrl, key)).status).toBe(401); // never cached there: looked up, refused
  });

  it('an OAuth access token revoked in the database is refused by every replica', async () => {
    const other = await startReplica({ RATE_LIMIT_READS_PER_MINUTE: '1000' });
    const user = await primary.context.services.users.create({ email: 'oauth-revoke@example.com' });
    const clientId = `psc_${randomToken(8)}`;
    await primary.database.db
      .insertInto('oauth_clients')
      .values({ id: clientId, client_name: 'read-path test', redirect_uris: ['http://127.0.0.1/callback'], grant_types: ['authorization_code'] })
      .execute();
    const token = `${ACCESS_TOKEN_PREFIX}${randomToken(32)}`;
    const familyId = randomUUID();
    await primary.database.db
      .insertInto('oauth_tokens')
      .values({ token_hash: hashSecret(token), kind: 'access', client_id: clientId, user_id: user.id, scopes: ['videos:read'], family_id: familyId, expires_at: new Date(Date.now() + 3_600_000) })
      .execute();
    expect((await get(other.baseUrl, token)).status).toBe(200);
    expect((await get(primary.baseUrl, token)).status).toBe(200);

    await primary.database.db.updateTable('oauth_tokens').set({ revoked_at: new Date() }).where('family_id', '=', familyId).execute();
    await waitFor('the revocation to reach both replicas', async () => (await get(other.baseUrl, token)).status === 401 && (await get(primary.baseUrl, token)).status === 401, 2_000);
  });

  it('the read limit holds across replicas sharing Redis: the N+1th request is 429 with its headers', async () => {
    const other = await startReplica({ RATE_LIMIT_READS_PER_MINUTE: String(READS_PER_MINUTE) });
    const { key } = await newKey('shared-limit@example.com');
    await awayFromWindowEdge();
    const answers: Response[] = [];
    for (let i = 0; i <= READS_PER_MINUTE; i++) answers.push(await get(i % 2 === 0 ? primary.baseUrl : other.baseUrl, key));

    expect(answers.slice(0, READS_PER_MINUTE).map((answer) => answer.status)).toEqual(Array(READS_PER_MINUTE).fill(200));
    expect(answers.slice(0, READS_PER_MINUTE).map((answer) => /r=(\d+)/.exec(answer.headers.get('ratelimit')!)![1])).toEqual(['4', '3', '2', '1', '0']);
    const refused = answers[READS_PER_MINUTE]!;
    expect(refused.status).toBe(429);
    expect((await json(refused)).error.code).toBe('rate_limited');
    expect(refused.headers.get('ratelimit-policy')).toBe(`"read";q=${READS_PER_MINUTE};w=60`);
    expect(refused.headers.get('ratelimit')).toMatch(/^"read";r=0;t=\d+$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Counted in Redis, not in Postgres.
    expect(await primary.database.db.selectFrom('rate_limit_windows').selectAll().execute()).toEqual([]);
  });

  it('while Redis is down, the limit is counted in Postgres (logged once), and in Redis again when it is back', async () => {
    const port = await freePort();
    const outage = await startRedis(port);
    const a = await startReplica({ REDIS_URL: outage.url });
    const b = await startReplica({ REDIS_URL: outage.url });
    const { key } = await newKey('redis-down@example.com');
    expect((await get(a.baseUrl, key)).status).toBe(200); // connects to Redis
    await stopProcess(outage.process);

    await awayFromWindowEdge();
    const statuses: number[] = [];
    for (let i = 0; i <= READS_PER_MINUTE; i++) statuses.push((await get(i % 2 === 0 ? a.baseUrl : b.baseUrl, key)).status);
    expect(statuses).toEqual([...Array(READS_PER_MINUTE).fill(200), 429]);
    const windows = await primary.database.db.selectFrom('rate_limit_windows').select(['bucket', 'hits']).execute();
    expect(windows.map((row) => row.hits)).toEqual([READS_PER_MINUTE + 1]);
    for (const replica of [a, b]) {
      expect(replica.logLines.filter((line) => line.includes('Redis does not answer'))).toHaveLength(1);
    }

    const back = await startRedis(port);
    await waitFor('the replica to count in Redis again', async () => {
      await get(a.baseUrl, key);
      return a.logLines.some((line) => line.includes('Redis answers again'));
    }, 10_000);
    await stopProcess(back.process);
  });

  /** A processing API video of a new account, inserted as a render would leave it. */
  async function newVideo(email: string) {
    const { key, userId } = await newKey(email);
    const { id } = await primary.database.db
      .insertInto('videos')
      .values({ user_id: userId, origin: 'api', payment: 'api_credit', status: 'processing', progress: 40, image_key: 'videos/read-path/photo.jpg', has_watermark: false })
      .returning('id')
      .executeTakeFirstOrThrow();
    const poll = async (replica: Replica) => {
      const answer = await get(replica.baseUrl, key, `/v1/videos/${id}`);
      return answer.status === 200 ? ((await json(answer)) as { status: string; progress: number }) : answer.status;
    };
    return { id, poll, key, userId };
  }

  /** Changes a video by hand with triggers off (session_replication_role = replica): no NOTIFY reaches anyone. */
  async function changeSilently(id: string, progress: number) {
    await primary.database.db.connection().execute(async (connection) => {
      await sql`set session_replication_role = replica`.execute(connection);
      await connection.updateTable('videos').set({ progress }).where('id', '=', id).execute();
      await sql`set session_replication_role = origin`.execute(connection);
    });
  }

  it('a poll answers from the replica\'s memory, and a change made anywhere (here by hand in SQL) shows within a second', async () => {
    const other = await startReplica({ RATE_LIMIT_READS_PER_MINUTE: '1000' });
    const { id, poll } = await newVideo('video-notify@example.com');
    expect(await poll(other)).toMatchObject({ status: 'processing', progress: 40 });
    await changeSilently(id, 41);
    expect(await poll(other)).toMatchObject({ progress: 40 }); // kept: no query, and no change announced

    await primary.database.db.updateTable('videos').set({ status: 'completed', progress: 100, output_key: 'videos/read-path/video.mp4', thumbnail_key: 'videos/read-path/thumbnail.jpg', completed_at: new Date() }).where('id', '=', id).execute();
    const changedAt = Date.now();
    await waitFor('the change to reach the replica', async () => ((await poll(other)) as { status: string }).status === 'completed', 5_000);
    expect(Date.now() - changedAt).toBeLessThan(1_000);

    await primary.database.db.deleteFrom('videos').where('id', '=', id).execute();
    await waitFor('the deletion to reach the replica', async () => (await poll(other)) === 404, 1_000);
  });

  it('a replica that missed a change shows it once the entry expires (VIDEO_CACHE_TTL_SECONDS), and one whose LISTEN dropped reads the database until it is back', async () => {
    const other = await startReplica({ RATE_LIMIT_READS_PER_MINUTE: '1000', VIDEO_CACHE_TTL_SECONDS: '2' });
    const { id, poll } = await newVideo('video-silent@example.com');
    expect(await poll(other)).toMatchObject({ progress: 40 });
    const cachedAt = Date.now();
    await changeSilently(id, 45);
    await waitFor('the entry to expire', async () => ((await poll(other)) as { progress: number }).progress === 45, 5_000);
    expect(Date.now() - cachedAt).toBeLessThan(2_000 + 1_000);

    // The replica's LISTEN connection is cut: from then on nothing it kept is trusted, so a silent change shows at once.
    expect(await poll(other)).toMatchObject({ progress: 45 });
    const listeners = sql<{ pid: number }>`select pid from pg_stat_activity where query = 'listen "video_changed"' and datname = current_database()`;
    const before = (await listeners.execute(primary.database.db)).rows.map((row) => row.pid);
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where query = 'listen "video_changed"' and datname = current_database()`.execute(primary.database.db);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await changeSilently(id, 46);
    expect(await poll(other)).toMatchObject({ progress: 46 });
    // It listens again after a second, and announced changes reach it as before.
    await waitFor('the replicas to listen again', async () => (await listeners.execute(primary.database.db)).rows.length >= before.length, 5_000);
    expect(await poll(other)).toMatchObject({ progress: 46 });
    await primary.database.db.updateTable('videos').set({ progress: 47 }).where('id', '=', id).execute();
    await waitFor('the change to reach the replica', async () => ((await poll(other)) as { progress: number }).progress === 47, 1_000);
  });

  it('the status websocket reports what a status notification announces, although the replica\'s video cache has not heard of the change', async () => {
    const other = await startReplica({ RATE_LIMIT_READS_PER_MINUTE: '1000' });
    const { id, poll, key, userId } = await newVideo('video-websocket@example.com');
    expect(await poll(other)).toMatchObject({ progress: 40 });
    const socket = new WebSocket(`${other.baseUrl.replace(/^http/, 'ws')}/ws`, { headers: { Authorization: `Bearer ${key}` } });
    const messages: { type: string; id?: string; progress?: number }[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data))));
    await waitFor('the socket to be ready', async () => messages.some((message) => message.type === 'ready'), 5_000);

    // The status channel announces a change whose row update fires no trigger (so the cache's channel says nothing).
    await primary.database.db.connection().execute(async (connection) => {
      await sql`set session_replication_role = replica`.execute(connection);
      await connection.updateTable('videos').set({ progress: 60 }).where('id', '=', id).execute();
      await sql`set session_replication_role = origin`.execute(connection);
      const event = { videoId: id, userId, status: 'processing', progress: 60, failureCode: null, failureReason: null };
      await sql`select pg_notify(${VIDEO_STATUS_CHANNEL}, ${JSON.stringify(event)})`.execute(connection);
    });
    await waitFor('the status event', async () => messages.some((message) => message.type === 'video.status'), 5_000);
    socket.close();
    expect(messages.find((message) => message.type === 'video.status')).toMatchObject({ id, progress: 60 });
    expect(await poll(other)).toMatchObject({ progress: 40 }); // the poll's cache was not told: only the socket read the database
  });

  it('records last_used_at at the first use and batches later uses instead of writing each', async () => {
    const other = await startReplica({ RATE_LIMIT_READS_PER_MINUTE: '1000' });
    const { key, record } = await newKey('last-used@example.com');
    const lastUsed = async () => (await primary.database.db.selectFrom('api_keys').select('last_used_at').where('id', '=', record.id).executeTakeFirstOrThrow()).last_used_at;
    expect(await lastUsed()).toBeNull();

    expect((await get(other.baseUrl, key)).status).toBe(200);
    const first = await lastUsed();
    expect(first).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (let i = 0; i < 3; i++) expect((await get(other.baseUrl, key)).status).toBe(200);
    expect(await lastUsed()).toEqual(first); // not a write per request

    await other.context.services.apiKeys.flushUses(); // what the batch timer (or stopping) does
    const later = await lastUsed();
    expect(later!.getTime()).toBeGreaterThan(first!.getTime());
  });
});

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
