import { createClient } from 'redis';
import type { Logger } from '../logging/logger.ts';
import type { RateLimitRepository } from '../repositories/rate-limit.repository.ts';
import { noMetrics, type Metrics } from './ports/metrics.ts';

export type RatePolicy = { name: 'read' | 'write' | 'media' | 'sign_in'; limit: number; windowSeconds: number };

export type RatePolicies = Record<RatePolicy['name'], RatePolicy>;

/**
 * The public API's limits per account as the spec gives them (Limits); `media`: the web app's expensive calls
 * (creates, speech, soundtrack extraction), which each start ffmpeg or an upstream request; and `sign_in`: the
 * endpoints that hand out credentials or register clients without one (POST /oauth/token, /oauth/register,
 * /dev-identity/token), per client address, one bucket for the three. Configurable per deployment.
 */
export function ratePolicies(readPerMinute = 60, writePerMinute = 10, mediaPerMinute = 20, signInPerMinute = 20): RatePolicies {
  return {
    read: { name: 'read', limit: readPerMinute, windowSeconds: 60 },
    write: { name: 'write', limit: writePerMinute, windowSeconds: 60 },
    media: { name: 'media', limit: mediaPerMinute, windowSeconds: 60 },
    sign_in: { name: 'sign_in', limit: signInPerMinute, windowSeconds: 60 },
  };
}

export type RateDecision = { allowed: boolean; limit: number; remaining: number; resetSeconds: number };

/** Where window counts live: Redis or Postgres (shared by every API replica), or this process (embedded default). */
export interface RateLimitStore {
  /** Counts one hit in the window of `windowMs` starting at `windowStart`; returns the hits so far. */
  hit(bucket: string, windowStart: Date, windowMs: number): Promise<number>;
  close?(): Promise<void>;
}

/** Counts a hit and, on the window's first, sets the key to expire with the window: one atomic round trip. */
const HIT_SCRIPT = "local hits = redis.call('INCR', KEYS[1]) if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return hits";
/** A Redis that has not answered by then counts as down, so a hung Redis cannot hold requests up. */
const REDIS_TIMEOUT_MS = 250;
const REDIS_RECONNECT_MS = 1_000;

/**
 * Window counts in Redis (REDIS_URL), shared by every API replica. Connects on the first hit (which waits
 * for that first attempt), so processes that never rate-limit (workers) open no connection; afterwards a
 * hit while the connection is down fails at once, and the client reconnects in the background.
 */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly client;
  private connecting: Promise<unknown> | undefined;

  constructor(url: string) {
    this.client = createClient({ url, disableOfflineQueue: true, socket: { connectTimeout: REDIS_TIMEOUT_MS * 4, reconnectStrategy: REDIS_RECONNECT_MS } });
    // Every failed reconnect emits an error; the outage is logged once, by FallbackRateLimitStore.
    this.client.on('error', () => {});
  }

  async hit(bucket: string, windowStart: Date, windowMs: number): Promise<number> {
    this.connecting ??= withTimeout(this.client.connect(), 'connect').catch(() => {});
    await this.connecting;
    if (!this.client.isReady) throw new Error('Redis is not connected');
    const hits = this.client.eval(HIT_SCRIPT, { keys: [`petsing:rate:${bucket}:${windowStart.getTime()}`], arguments: [String(windowMs)] });
    return Number(await withTimeout(hits, 'answer'));
  }

  async close(): Promise<void> {
    if (this.connecting) this.client.destroy();
  }
}

async function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not ${what} within ${REDIS_TIMEOUT_MS} ms`)), REDIS_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Redis first; while it does not answer, the `fallback` store (Postgres, or this process on the embedded
 * database) counts instead, so the limits still hold and requests are neither refused nor let through
 * unlimited. Each outage is logged once when it starts and once when it ends. A subject whose window
 * straddles the switch may get up to its limit in each store.
 */
export class FallbackRateLimitStore implements RateLimitStore {
  private failing = false;

  constructor(
    private readonly primary: RateLimitStore,
    private readonly fallback: RateLimitStore,
    private readonly logger: Logger,
  ) {}

  async hit(bucket: string, windowStart: Date, windowMs: number): Promise<number> {
    try {
      const hits = await this.primary.hit(bucket, windowStart, windowMs);
      if (this.failing) {
        this.failing = false;
        this.logger.info('Redis answers again: rate limits are counted there again');
      }
      return hits;
    } catch (error) {
      if (!this.failing) {
        this.failing = true;
        this.logger.warn({ err: error }, 'Redis does not answer: rate limits are counted in the database until it does');
      }
      return this.fallback.hit(bucket, windowStart, windowMs);
    }
  }

  async close(): Promise<void> {
    await this.primary.close?.();
  }
}

export class PostgresRateLimitStore implements RateLimitStore {
  private lastSweep = 0;
  constructor(private readonly windows: RateLimitRepository) {}

  async hit(bucket: string, windowStart: Date): Promise<number> {
    const hits = await this.windows.hit(bucket, windowStart);
    // Old windows are worthless; sweeping now and then keeps the table small without a cron job.
    if (Date.now() - this.lastSweep > 60_000) {
      this.lastSweep = Date.now();
      await this.windows.deleteBefore(new Date(Date.now() - 3_600_000));
    }
    return hits;
  }
}

export class InProcessRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, number>();

  async hit(bucket: string, windowStart: Date): Promise<number> {
    const key = `${bucket}@${windowStart.getTime()}`;
    const hits = (this.windows.get(key) ?? 0) + 1;
    this.windows.set(key, hits);
    if (this.windows.size > 10_000) this.sweep(windowStart.getTime());
    return hits;
  }

  private sweep(current: number): void {
    for (const key of this.windows.keys()) if (Number(key.split('@').pop()) < current) this.windows.delete(key);
  }
}

/** Fixed windows aligned to the clock: simple, exact under concurrency, and cheap to share. */
export class RateLimiter {
  constructor(
    private readonly store: RateLimitStore,
    readonly policies: RatePolicies,
    private readonly now: () => number = Date.now,
    /** Counts refusals by policy. */
    private readonly metrics: Metrics = noMetrics,
  ) {}

  close(): Promise<void> {
    return this.store.close?.() ?? Promise.resolve();
  }

  async hit(subject: string, policy: RatePolicy): Promise<RateDecision> {
    const windowMs = policy.windowSeconds * 1000;
    const now = this.now();
    const windowStart = Math.floor(now / windowMs) * windowMs;
    const hits = await this.store.hit(`${policy.name}:${subject}`, new Date(windowStart), windowMs);
    if (hits > policy.limit) this.metrics.rateLimited(policy.name);
    return {
      allowed: hits <= policy.limit,
      limit: policy.limit,
      remaining: Math.max(0, policy.limit - hits),
      resetSeconds: Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)),
    };
  }
}
