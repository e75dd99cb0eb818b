import { z } from 'zod';
import { AppError, notFound } from '../errors/app-error.ts';
import { hasSqlState, sqlState } from '../db/errors.ts';
import type { SubscriptionStatus, User } from '../db/schema.ts';
import type { UserRepository } from '../repositories/user.repository.ts';
import { FREE_CREDITS_PER_MONTH } from '../domain/pricing.ts';
import { hashSecret, randomToken } from './secrets.ts';

const uuid = z.uuid();
export const emailSchema = z.email().max(320);

export class UserService {
  constructor(private readonly users: UserRepository) {}

  async create(input: { email: string; identitySubject?: string }): Promise<User> {
    const parsed = emailSchema.safeParse(input.email.trim());
    if (!parsed.success) throw new AppError('invalid_request', `"${input.email}" is not a valid email address.`);
    const email = parsed.data;
    try {
      return await this.users.create({
        email,
        identity_subject: input.identitySubject ?? null,
        // A unique placeholder: before the first email, EmailService replaces it with the digest of the
        // user's derived unsubscribe token (the token itself is never stored).
        unsubscribe_token_hash: hashSecret(randomToken()),
      });
    } catch (error) {
      if (hasSqlState(error, sqlState.uniqueViolation)) {
        throw new AppError('conflict', `A user with email ${email} already exists.`, {
          hint: 'Refer to the existing user by id or email.',
        });
      }
      throw error;
    }
  }

  /** Resolves an operator's `--user` argument, which may be a user id or an email address. */
  async resolve(idOrEmail: string): Promise<User> {
    const user = uuid.safeParse(idOrEmail).success
      ? await this.users.findById(idOrEmail)
      : await this.users.findByEmail(idOrEmail.trim());
    if (!user) throw notFound(`User ${idOrEmail}`);
    return user;
  }

  async findById(id: string): Promise<User | undefined> {
    return this.users.findById(id);
  }
}

/** Subscription states in which the plan's benefits apply (no credits spent, no watermark). */
const SUBSCRIBED_STATES: readonly SubscriptionStatus[] = ['active', 'trialing'];

export const isSubscribed = (user: Pick<User, 'subscription_status'>): boolean => SUBSCRIBED_STATES.includes(user.subscription_status);

/** The first day of `now`'s calendar month in UTC, as the date string free_credits_month stores. */
export const freeCreditMonth = (now: Date): string => `${now.toISOString().slice(0, 7)}-01`;

export function nextFreeCreditReset(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

/** Free credits left this month: the stored count belongs to an earlier month once a new one began. */
export function freeCreditsNow(user: Pick<User, 'free_credits' | 'free_credits_month'>, now: Date): number {
  const stored = user.free_credits_month instanceof Date ? user.free_credits_month.toISOString().slice(0, 10) : String(user.free_credits_month).slice(0, 10);
  return stored === freeCreditMonth(now) ? user.free_credits : FREE_CREDITS_PER_MONTH;
}
