import { useSyncExternalStore } from 'react';

/**
 * The signed-in person: an ID token (from the development sign-in or the OIDC provider) and the address it
 * names. Kept in localStorage so a reload or a second tab stays signed in until the token expires.
 */
export type Session = { idToken: string; email: string; expiresAt: number; via: 'development' | 'oidc' };

const KEY = 'petsing.session';
const listeners = new Set<() => void>();
let current: Session | null = read();
/** Why the last session ended, shown once on the sign-in page. */
let endedBecause: string | null = null;
/** The person signed out (rather than their token expiring): pages that need a session go to the start page. */
let signedOutByUser = false;

function read(): Session | null {
  try {
    const stored = JSON.parse(localStorage.getItem(KEY) ?? 'null') as Session | null;
    return stored && typeof stored.idToken === 'string' && stored.expiresAt > Date.now() ? stored : null;
  } catch {
    return null;
  }
}

function publish(next: Session | null): void {
  current = next;
  if (next) localStorage.setItem(KEY, JSON.stringify(next));
  else localStorage.removeItem(KEY);
  for (const listener of listeners) listener();
}

window.addEventListener('storage', (event) => {
  if (event.key !== KEY) return;
  current = read();
  for (const listener of listeners) listener();
});

export const session = {
  get: (): Session | null => (current && current.expiresAt > Date.now() ? current : null),
  token: (): string | undefined => session.get()?.idToken,
  signIn: (next: Session) => {
    endedBecause = null;
    signedOutByUser = false;
    publish(next);
  },
  signOut: () => {
    signedOutByUser = true;
    publish(null);
  },
  /** Drops a sign-in that did not work out (nobody signed out on purpose). */
  discard: () => publish(null),
  wasSignedOutByUser: () => signedOutByUser,
  /** The API refused the token (expired or revoked): sign out and say why on the sign-in page. */
  expire: (reason: string) => {
    endedBecause = reason;
    publish(null);
  },
  takeEndReason: (): string | null => {
    const reason = endedBecause;
    endedBecause = null;
    return reason;
  },
  subscribe: (listener: () => void) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

export function useSession(): Session | null {
  return useSyncExternalStore(session.subscribe, session.get);
}
