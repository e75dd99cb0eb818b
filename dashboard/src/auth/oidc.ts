import type { UserManager } from 'oidc-client-ts';
import { settings } from '../settings.ts';
import { safeReturnPath } from './return-path.ts';
import { session } from './session.ts';

/**
 * Sign-in with the configured OpenID Connect provider: authorization code flow with PKCE (S256), done by
 * oidc-client-ts; the ID token then calls the web-app endpoints. Loaded only when a provider is configured,
 * so the development sign-in pays nothing for it.
 */
let manager: Promise<UserManager> | undefined;

function userManager(): Promise<UserManager> {
  const signIn = settings.signIn;
  if (signIn.kind !== 'oidc') return Promise.reject(new Error('No identity provider is configured.'));
  manager ??= import('oidc-client-ts').then(
    ({ UserManager: Manager, WebStorageStateStore }) =>
      new Manager({
        authority: signIn.authority,
        client_id: signIn.clientId,
        redirect_uri: `${window.location.origin}/app/callback`,
        post_logout_redirect_uri: `${window.location.origin}/`,
        response_type: 'code',
        scope: 'openid email profile',
        userStore: new WebStorageStateStore({ store: window.sessionStorage }),
      }),
  );
  return manager;
}

/** Sends the browser to the provider; it comes back to /app/callback. */
export async function startOidcSignIn(returnTo: string): Promise<void> {
  await (await userManager()).signinRedirect({ state: { returnTo } });
}

/** Completes the code exchange on /app/callback; answers where to go next. */
export async function completeOidcSignIn(): Promise<string> {
  const user = await (await userManager()).signinRedirectCallback();
  const email = typeof user.profile.email === 'string' ? user.profile.email : (user.profile.sub ?? '');
  if (!user.id_token) throw new Error('The identity provider sent no ID token.');
  session.signIn({ idToken: user.id_token, email, expiresAt: (user.expires_at ?? Date.now() / 1000 + 3600) * 1000, via: 'oidc' });
  const state = user.state as { returnTo?: string } | undefined;
  return safeReturnPath(state?.returnTo, '/app');
}
