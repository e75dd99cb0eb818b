import type { ApiKey } from '../db/schema.ts';
import type { Scope } from '../domain/scopes.ts';
import { notFound } from '../errors/app-error.ts';
import type { Logger } from '../logging/logger.ts';
import type { ApiKeyRepository } from '../repositories/api-key.repository.ts';
import type { CredentialCache } from './credential-cache.ts';
import type { ApiCredential } from './api-credential.ts';
import { constantTimeEqual, hashSecret, randomToken } from './secrets.ts';

/** Every key starts with this, so leaked keys are recognisable by secret scanners. */
const API_KEY_PREFIX = 'psk_live_';
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 6;
/**
 * How far behind a key's `last_used_at` may be: a use is written at once when this process last wrote the
 * key's use longer ago than this, otherwise with the next batch, at most this much later (not a write per request).
 */
const LAST_USED_RESOLUTION_MS = 60_000;


export class ApiKeyService {
  /** When this process last wrote each key's use, and the uses waiting for the next batch. */
  private readonly written = new Map<string, number>();
  private readonly pending = new Map<string, Date>();
  private batch: NodeJS.Timeout | undefined;

  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly cache: CredentialCache,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Returns the key in full exactly once; only its SHA-256 digest is stored. */
  async create(input: { userId: string; scopes: Scope[]; name?: string }): Promise<{ key: string; record: ApiKey }> {
    const key = `${API_KEY_PREFIX}${randomToken(32)}`;
    const record = await this.keys.create({
      userId: input.userId,
      name: input.name ?? '',
      displayPrefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
      keyHash: hashSecret(key),
      scopes: [...new Set(input.scopes)].sort() as Scope[],
    });
    return { key, record };
  }

  list(userId: string): Promise<ApiKey[]> {
    return this.keys.listForUser(userId);
  }

  /** Revokes a key of the user; false when there is no such active key. Refused at once by this process. */
  async revoke(userId: string, keyId: string): Promise<boolean> {
    const digest = await this.keys.revoke(keyId, userId);
    if (digest) this.cache.forget([digest]);
    return digest !== undefined;
  }

  /** DELETE /user/api-keys/{id}: revokes an active key of the user; not_found when there is none (a revoked key stays revoked). */
  async revokeActive(userId: string, keyId: string): Promise<void> {
    if (!(await this.revoke(userId, keyId))) {
      throw notFound(`An active API key ${keyId}`, { hint: 'List your keys with GET /user/api-keys; a revoked key stays revoked.' });
    }
  }

  isApiKey(token: string): boolean {
    return token.startsWith(API_KEY_PREFIX);
  }

  /** The credential of the active key with this SHA-256 digest. */
  async authenticate(digest: string): Promise<ApiCredential | undefined> {
    const record = await this.keys.findActiveByHash(digest);
    if (!record || !constantTimeEqual(record.key_hash, digest)) return undefined;
    return { userId: record.user_id, scopes: record.scopes, kind: 'api_key', keyId: record.id };
  }

  /** Records a use of the key for `last_used_at`, throttled per key (LAST_USED_RESOLUTION_MS). */
  async recordUse(keyId: string): Promise<void> {
    const now = this.now();
    const written = this.written.get(keyId);
    if (written !== undefined && now - written < LAST_USED_RESOLUTION_MS) {
      this.pending.set(keyId, new Date(now));
      this.batch ??= setTimeout(() => void this.flushUses(), LAST_USED_RESOLUTION_MS).unref();
      return;
    }
    this.written.set(keyId, now);
    this.pending.delete(keyId);
    await this.keys.touch([{ id: keyId, at: new Date(now) }]);
  }

  /** Writes the waiting uses in one statement (also when the process stops). */
  async flushUses(): Promise<void> {
    clearTimeout(this.batch);
    this.batch = undefined;
    const uses = [...this.pending].map(([id, at]) => ({ id, at }));
    this.pending.clear();
    const now = this.now();
    for (const [id, at] of this.written) if (now - at >= LAST_USED_RESOLUTION_MS) this.written.delete(id);
    for (const use of uses) this.written.set(use.id, use.at.getTime());
    await this.keys.touch(uses).catch((error: unknown) => this.logger.error({ err: error, keys: uses.length }, 'could not record when API keys were last used'));
  }
}
