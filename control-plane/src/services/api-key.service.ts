import type { ApiKey, Scope } from '../db/schema.ts';
import type { ApiKeyRepository } from '../repositories/api-key.repository.ts';
import type { OAuthCredential } from './oauth.service.ts';
import { constantTimeEqual, hashSecret, randomToken } from './secrets.ts';

/** Every key starts with this, so leaked keys are recognisable by secret scanners. */
export const API_KEY_PREFIX = 'psk_live_';
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 6;

export type ApiCredential = { userId: string; scopes: Scope[]; kind: 'api_key'; keyId: string } | OAuthCredential;

export class ApiKeyService {
  constructor(private readonly keys: ApiKeyRepository) {}

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

  /** Revokes a key of the user; false when there is no such active key. */
  revoke(userId: string, keyId: string): Promise<boolean> {
    return this.keys.revoke(keyId, userId);
  }

  isApiKey(token: string): boolean {
    return token.startsWith(API_KEY_PREFIX);
  }

  async authenticate(token: string): Promise<ApiCredential | undefined> {
    const digest = hashSecret(token);
    const record = await this.keys.findActiveByHash(digest);
    if (!record || !constantTimeEqual(record.key_hash, digest)) return undefined;
    await this.keys.touch(record.id, new Date());
    return { userId: record.user_id, scopes: record.scopes, kind: 'api_key', keyId: record.id };
  }
}
