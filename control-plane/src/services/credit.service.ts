import { z } from 'zod';
import { hasSqlState, sqlState } from '../db/errors.ts';
import type { LedgerEntry } from '../db/schema.ts';
import { AppError } from '../errors/app-error.ts';
import type { CreditRepository } from '../repositories/credit.repository.ts';
import { noMetrics, type Metrics } from './ports/metrics.ts';

const grantAmount = z.number().int().min(1).max(1_000_000);

/** Ledger entries a statement lists, newest first. */
const STATEMENT_ENTRIES = 20;

/** A balance with the ledger entries that led to it. */
export type CreditStatement = { balance: number; recent: LedgerEntry[] };

export class CreditService {
  constructor(
    private readonly credits: CreditRepository,
    private readonly metrics: Metrics = noMetrics,
  ) {}

  async grant(userId: string, amount: number, idempotencyKey?: string): Promise<{ entry: LedgerEntry; balance: number }> {
    const parsed = grantAmount.safeParse(amount);
    if (!parsed.success) {
      throw new AppError('invalid_request', `Grant amount must be an integer from 1 to 1000000, got ${amount}.`);
    }
    try {
      const entry = await this.credits.append({ userId, delta: parsed.data, reason: 'grant', idempotencyKey: idempotencyKey ?? null });
      this.metrics.creditsGranted('grant', parsed.data);
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

  /** The balance and the latest `limit` ledger entries, newest first. */
  async statement(userId: string, limit = STATEMENT_ENTRIES): Promise<CreditStatement> {
    const [balance, recent] = await Promise.all([this.credits.balance(userId), this.credits.recent(userId, limit)]);
    return { balance, recent };
  }
}
