import type { ApiCredential } from './api-credential.ts';
import { NotifiedCache, type Listen } from './notified-cache.ts';
import type { ProtectedResource } from './oauth-resources.ts';

/** The NOTIFY channel on which the database announces a revoked or deleted credential (payload: its hash). */
const CREDENTIAL_REVOKED_CHANNEL = 'credential_revoked';

/**
 * Verified credentials of this process, keyed by the credential's SHA-256 digest and the resource it was
 * presented at, so a poll does not look its key up in the database every time. An entry lives at most
 * `ttlMs` (and never past an OAuth token's expiry). A revocation forgets the entry at once in the process
 * that made it, and in every other replica when the database's NOTIFY arrives (NotifiedCache). Only
 * credentials that verified are kept: a new key works at once and an unknown token is looked up each time.
 */
export class CredentialCache {
  private readonly cache: NotifiedCache<ApiCredential>;

  constructor(ttlMs: number, now?: () => number) {
    this.cache = new NotifiedCache(ttlMs, now);
  }

  /** Forgets credentials revoked by any replica (or by hand in SQL) as the database announces them. */
  follow(listen: Listen): Promise<() => Promise<void>> {
    return this.cache.follow(listen, CREDENTIAL_REVOKED_CHANNEL, keysOf);
  }

  get(digest: string, at: ProtectedResource): ApiCredential | undefined {
    return this.cache.get(cacheKey(digest, at));
  }

  mark(): number {
    return this.cache.mark();
  }

  put(digest: string, at: ProtectedResource, credential: ApiCredential, mark: number, expiresAt?: Date): void {
    this.cache.put(cacheKey(digest, at), credential, mark, expiresAt);
  }

  forget(digests: readonly string[]): void {
    this.cache.forget(digests.flatMap(keysOf));
  }
}

const RESOURCES: readonly ProtectedResource[] = ['api', 'mcp'];
const cacheKey = (digest: string, at: ProtectedResource) => `${at}:${digest}`;
const keysOf = (digest: string) => RESOURCES.map((at) => cacheKey(digest, at));
