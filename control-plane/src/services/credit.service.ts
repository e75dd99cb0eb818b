import { z } from 'zod';
import { hasSqlState, sqlState } from '../db/errors.ts';
import type { LedgerEntry } from '../db/schema.ts';
import { AppError } from '../errors/app-error.ts';
import type { CreditRepository } from '../repositories/credit.repository.ts';

/** Defined with the other money rules in pricing.ts; re-exported for the callers that import it from here. */
export { CREDITS_PER_VIDEO } from './pricing.ts';
const grantAmount = z.number().int().min(1).max(1_000_000);

export class CreditService {
  constructor(private readonly credits: CreditRepository) {}

  async grant(userId: string, amount: number, idempotencyKey?: string): Promise<{ entry: LedgerEntry; balance: number }> {
    const parsed = grantAmount.safeParse(amount);
    if (!parsed.success) {
      throw new AppError('invalid_request', `Grant amount must be an integer from 1 to 1000000, got ${amount}.`);
    }
    try {
      const entry = await this.credits.append({ userId, delta: parsed.data, reason: 'grant', idempotencyKey: idempotencyKey ?? null });
      return { entry, balance: await this.credits.balance(userId) };
    } catch (error) {
      if (hasSqlState(error, sqlState.uniqueViolation)) {
        throw new AppError('conflict', 'A grant with this idempotency key was already applied.');
      }
      throw error;
    }
  }

  balance(userId: string): Promise<number> {
    return this.credits.balance(userId);
  }

  recent(userId: string, limit = 20): Promise<LedgerEntry[]> {
    return this.credits.recent(userId, limit);
  }
}
