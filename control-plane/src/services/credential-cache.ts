import type { ApiCredential } from './api-key.service.ts';
import type { ProtectedResource } from './oauth.service.ts';

/** The NOTIFY channel on which the database announces a revoked or deleted credential (payload: its hash). */
export const CREDENTIAL_REVOKED_CHANNEL = 'credential_revoked';

/** Enough for every active key of a large deployment; past it the oldest entries go first. */
const MAX_ENTRIES = 10_000;

type Entry = { credential: ApiCredential; until: number };

/**
 * Verified credentials of this process, keyed by the credential's SHA-256 digest and the resource it was
 * presented at, so a poll does not look its key up in the database every time. An entry lives at most
 * `ttlMs` (and never past an OAuth token's expiry). A revocation forgets the entry at once in the process
 * that made it, and in every other replica when the database's NOTIFY arrives; a missed notification
 * (a dropped LISTEN connection) is bounded by the TTL. Only credentials that verified are kept: a new key
 * works at once and an unknown token is looked up each time.
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every forget, so a lookup that started before a revocation does not store what it found. */
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(digest: string, at: ProtectedResource): ApiCredential | undefined {
    const key = cacheKey(digest, at);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until > this.now()) return entry.credential;
    this.entries.delete(key);
    return undefined;
  }

  /** What a lookup must hand back to `put`: the generation it started in. */
  mark(): number {
    return this.generation;
  }

  put(digest: string, at: ProtectedResource, credential: ApiCredential, mark: number, expiresAt?: Date): void {
    if (this.ttlMs <= 0 || mark !== this.generation) return;
    const until = Math.min(this.now() + this.ttlMs, expiresAt?.getTime() ?? Number.POSITIVE_INFINITY);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(cacheKey(digest, at), { credential, until });
  }

  forget(digests: readonly string[]): void {
    this.generation += 1;
    for (const digest of digests) for (const at of RESOURCES) this.entries.delete(cacheKey(digest, at));
  }
}

const RESOURCES: readonly ProtectedResource[] = ['api', 'mcp'];
const cacheKey = (digest: string, at: ProtectedResource) => `${at}:${digest}`;
