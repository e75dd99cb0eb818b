import type { AppContext } from '../../control-plane/src/runtime/app-context.ts';

/** A user with a balance and two API keys: read+write and read-only. */
export async function createTestAccount(context: AppContext, email: string, credits: number) {
  const { users, apiKeys, credits: ledger } = context.services;
  const user = await users.create({ email });
  if (credits > 0) await ledger.grant(user.id, credits);
  return {
    id: user.id,
    readWrite: (await apiKeys.create({ userId: user.id, scopes: ['videos:read', 'videos:write'] })).key,
    readOnly: (await apiKeys.create({ userId: user.id, scopes: ['videos:read'] })).key,
  };
}
