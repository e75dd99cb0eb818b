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
}
