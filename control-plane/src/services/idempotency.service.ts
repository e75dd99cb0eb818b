import { createHash } from 'node:crypto';
import { AppError } from '../errors/app-error.ts';
import type { IdempotencyRepository } from '../repositories/idempotency.repository.ts';

const KEY_LIFETIME_MS = 24 * 3600 * 1000;
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;

export type IdempotentResult = { status: number; body: unknown; replayed: boolean };

/**
 * Idempotency-Key semantics as Stripe has them: a retry with the same key and body gets the first
 * answer again (and nothing happens twice); the same key with another body is refused; keys expire
 * after 24 hours. Only successes are remembered, so a retry after a failure really retries.
 */
export class IdempotencyService {
  constructor(private readonly records: IdempotencyRepository) {}

  static fingerprint(request: unknown): string {
    return createHash('sha256').update(JSON.stringify(request)).digest('hex');
  }

  async run(userId: string, key: string, requestHash: string, handler: () => Promise<{ status: number; body: unknown }>): Promise<IdempotentResult> {
    if (!VALID_KEY.test(key)) {
      throw new AppError('invalid_request', 'The Idempotency-Key header must be 1 to 255 printable ASCII characters.');
    }
    await this.records.deleteExpired(userId, key, new Date(Date.now() - KEY_LIFETIME_MS));
    if (!(await this.records.claim(userId, key, requestHash))) return this.replay(userId, key, requestHash);
    try {
      const result = await handler();
      if (result.status >= 200 && result.status < 300) await this.records.complete(userId, key, result.status, result.body);
      else await this.records.release(userId, key);
      return { ...result, replayed: false };
    } catch (error) {
      await this.records.release(userId, key);
      throw error;
    }
  }

  private async replay(userId: string, key: string, requestHash: string): Promise<IdempotentResult> {
    const record = await this.records.find(userId, key);
    if (record && record.requestHash !== requestHash) {
      throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used with a different request body.');
    }
    if (!record || record.status === null) {
      throw new AppError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed.');
    }
    return { status: record.status, body: record.body, replayed: true };
  }
}
