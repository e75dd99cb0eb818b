/**
 * The servers `npm run bench:api` loads, in a process of their own so the load generator does not share
 * their event loop: the real service app on a fresh Postgres database, once with the rate limits in Redis
 * and once in Postgres, and a bare Express handler that answers the same JSON. Prints one JSON line with
 * their addresses and a key per measured run (each run is its own account, so no run meets the read limit),
 * then serves until stdin closes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import pino from 'pino';
import { loadControlPlaneConfig } from '../../control-plane/src/config/env.ts';
import { createLogger } from '../../control-plane/src/logging/logger.ts';
import { startApiServer } from '../../control-plane/src/runtime/api-server.ts';
import { openAppContext } from '../../control-plane/src/runtime/bootstrap.ts';
import { createPostgresTestDatabase } from '../support/database.ts';
import { freePort } from '../support/processes.ts';

const [redisUrl, accounts] = [process.argv[2]!, Number(process.argv[3])];
const dataDir = await mkdtemp(join(tmpdir(), 'petsing-bench-api-'));
const database = await createPostgresTestDatabase();
const cleanups: (() => Promise<void>)[] = [() => database.drop(), () => rm(dataDir, { recursive: true, force: true })];

async function startService(env: Record<string, string>) {
  const port = await freePort();
  const config = loadControlPlaneConfig({
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: database.url!,
    RATE_LIMIT_READS_PER_MINUTE: '100000',
    ...env,
  });
  // Request logging stays on, as in production, written where it costs what a log file costs.
  const logger = createLogger('info', 'petsing', pino.destination({ dest: '/dev/null', sync: false }));
  const context = await openAppContext(config, logger, { database });
  const api = await startApiServer(context, port);
  cleanups.unshift(async () => {
    await api.close();
    await context.close();
  });
  // Loaded on the address it listens on, as the bare handler is (localhost may resolve to ::1 first).
  return { baseUrl: `http://127.0.0.1:${port}`, context };
}

const withRedis = await startService({ REDIS_URL: redisUrl });
const withPostgres = await startService({});

const { users, apiKeys } = withRedis.context.services;
const runs: { key: string; videoId: string }[] = [];
for (let i = 0; i < accounts; i++) {
  const user = await users.create({ email: `bench-${i}@example.com` });
  const { key } = await apiKeys.create({ userId: user.id, scopes: ['videos:read'] });
  const video = await database.db
    .insertInto('videos')
    .values({
      user_id: user.id,
      origin: 'api',
      payment: 'api_credit',
      status: 'completed',
      progress: 100,
      image_key: 'videos/bench/photo.jpg',
      output_key: 'videos/bench/video.mp4',
      thumbnail_key: 'videos/bench/thumbnail.jpg',
      has_watermark: false,
      completed_at: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  runs.push({ key, videoId: video.id });
}

// The bare handler answers exactly what the service answers for the poll.
const sample = await fetch(`${withRedis.baseUrl}/v1/videos/${runs[0]!.videoId}`, { headers: { Authorization: `Bearer ${runs[0]!.key}` } });
if (sample.status !== 200) throw new Error(`the service answered the poll with ${sample.status}`);
const body: unknown = await sample.json();
const bare = express();
bare.get('/v1/videos/:id', (_req, res) => {
  res.json(body);
});
const barePort = await freePort();
const bareServer = await new Promise<Server>((resolve) => {
  const server = bare.listen(barePort, '127.0.0.1', () => resolve(server));
});
cleanups.unshift(() => new Promise<void>((resolve) => bareServer.close(() => resolve())));

console.log(JSON.stringify({ service: withRedis.baseUrl, servicePostgres: withPostgres.baseUrl, bare: `http://127.0.0.1:${barePort}`, runs }));

process.stdin.resume();
process.stdin.on('end', () => {
  void (async () => {
    for (const cleanup of cleanups) await cleanup().catch((error: unknown) => console.error(error));
    process.exit(0);
  })();
});
