import type { AppContext } from '../../control-plane/src/runtime/app-context.ts';
import { loadDevIdentityKeys, mintDevIdToken } from '../../control-plane/src/services/dev-identity.ts';
import type { TestService } from './test-service.ts';

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

/** Signs in to the web app through the development identity provider; the first request creates the account. */
export async function signInWebUser(service: Pick<TestService, 'baseUrl' | 'env'>, email: string): Promise<{ token: string; id: string }> {
  const token = await mintDevIdToken(await loadDevIdentityKeys(service.env.DATA_DIR!), { baseUrl: service.baseUrl, email });
  const response = await fetch(`${service.baseUrl}/user/me`, { headers: { Authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`Signing in ${email} answered ${response.status}: ${await response.text()}`);
  return { token, id: ((await response.json()) as { id: string }).id };
}

/** Fixed rate-limit windows reset on the minute: a test counting to a limit must not straddle the boundary. */
export async function awayFromWindowEdge(): Promise<void> {
  const intoWindow = Date.now() % 60_000;
  if (intoWindow > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoWindow + 200));
}
