import type { Kysely } from 'kysely';
import type { Database, NewUser, User } from '../db/schema.ts';

export class UserRepository {
  constructor(private readonly db: Kysely<Database>) {}

  create(user: NewUser): Promise<User> {
    return this.db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
  }

  findById(id: string): Promise<User | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findByEmail(email: string): Promise<User | undefined> {
    return this.db
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
      .executeTakeFirst();
  }

  findByIdentitySubject(subject: string): Promise<User | undefined> {
    return this.db.selectFrom('users').selectAll().where('identity_subject', '=', subject).executeTakeFirst();
  }

  /** Links an account created by email to its sign-in subject; only an unlinked account is changed. */
  linkIdentitySubject(id: string, subject: string): Promise<User | undefined> {
    return this.db
      .updateTable('users')
      .set({ identity_subject: subject, updated_at: new Date() })
      .where('id', '=', id)
      .where('identity_subject', 'is', null)
      .returningAll()
      .executeTakeFirst();
  }

  /** Stores the digest of the user's unsubscribe token; a no-op when it is already the stored one. */
  async setUnsubscribeTokenHash(id: string, tokenHash: string): Promise<void> {
    await this.db
      .updateTable('users')
      .set({ unsubscribe_token_hash: tokenHash, updated_at: new Date() })
      .where('id', '=', id)
      .where('unsubscribe_token_hash', '<>', tokenHash)
      .execute();
  }

  /** Opts the holder of the token out of lifecycle email; opting out again changes nothing. */
  optOutByUnsubscribeTokenHash(tokenHash: string): Promise<User | undefined> {
    return this.db
      .updateTable('users')
      .set({ email_opt_out: true, updated_at: new Date() })
      .where('unsubscribe_token_hash', '=', tokenHash)
      .returningAll()
      .executeTakeFirst();
  }

  /** Opted-in users created before a date, in id order from after `afterId` (keyset pages for batch jobs). */
  listEmailRecipients(options: { createdBefore: Date; afterId: string | undefined; limit: number }): Promise<User[]> {
    return this.db
      .selectFrom('users')
      .selectAll()
      .where('email_opt_out', '=', false)
      .where('created_at', '<', options.createdBefore)
      .$if(options.afterId !== undefined, (query) => query.where('id', '>', options.afterId!))
      .orderBy('id')
      .limit(options.limit)
      .execute();
  }
}
