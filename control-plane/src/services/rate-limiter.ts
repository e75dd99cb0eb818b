import type { RateLimitRepository } from '../repositories/rate-limit.repository.ts';

export type RatePolicy = { name: 'read' | 'write' | 'media'; limit: number; windowSeconds: number };

export type RatePolicies = Record<RatePolicy['name'], RatePolicy>;

/**
 * The public API's limits per account as the spec gives them (Limits), and `media`: the web app's
 * expensive calls (creates, speech, soundtrack extraction), which each start ffmpeg or an upstream request.
 * Configurable per deployment.
 */
export function ratePolicies(readPerMinute = 60, writePerMinute = 10, mediaPerMinute = 20): RatePolicies {
  return {
    read: { name: 'read', limit: readPerMinute, windowSeconds: 60 },
    write: { name: 'write', limit: writePerMinute, windowSeconds: 60 },
    media: { name: 'media', limit: mediaPerMinute, windowSeconds: 60 },
  };
}

export type RateDecision = { allowed: boolean; limit: number; remaining: number; resetSeconds: number };

/** Where window counts live: Postgres (shared by every API replica) or this process (embedded default). */
export interface RateLimitStore {
  hit(bucket: string, windowStart: Date): Promise<number>;
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
  ) {}

  async hit(subject: string, policy: RatePolicy): Promise<RateDecision> {
    const windowMs = policy.windowSeconds * 1000;
    const now = this.now();
    const windowStart = Math.floor(now / windowMs) * windowMs;
    const hits = await this.store.hit(`${policy.name}:${subject}`, new Date(windowStart));
    return {
      allowed: hits <= policy.limit,
      limit: policy.limit,
      remaining: Math.max(0, policy.limit - hits),
      resetSeconds: Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)),
    };
  }
}
