import type { ApiCredential } from './api-credential.ts';
import type { ApiKeyService } from './api-key.service.ts';
import type { CredentialCache } from './credential-cache.ts';
import type { Listen } from './notified-cache.ts';
import type { ProtectedResource } from './oauth-resources.ts';
import type { OAuthService } from './oauth.service.ts';
import { hashSecret } from './secrets.ts';

/** Resolves a bearer credential presented to /v1 or /mcp: an API key, or an OAuth access token. */
export class CredentialService {
  constructor(
    private readonly apiKeys: ApiKeyService,
    private readonly oauth: OAuthService,
    private readonly cache: CredentialCache,
  ) {}

  /**
   * The credential behind `token`, presented `at` one of the protected resources. An API key is good at
   * every one; an OAuth access token only at the resource it was issued for (RFC 8707 audience). Verified
   * credentials come from the cache for a few seconds (CredentialCache says how revocation reaches it).
   */
  async verify(token: string, at: ProtectedResource): Promise<ApiCredential | undefined> {
    const isApiKey = this.apiKeys.isApiKey(token);
    if (!isApiKey && !this.oauth.isAccessToken(token)) return undefined;
    const digest = hashSecret(token);
    let credential = this.cache.get(digest, at);
    if (!credential) {
      const mark = this.cache.mark();
      const found = isApiKey ? await this.apiKeys.authenticate(digest).then((key) => key && { credential: key, expiresAt: undefined }) : await this.oauth.authenticate(digest, at);
      if (!found) return undefined;
      credential = found.credential;
      this.cache.put(digest, at, credential, mark, found.expiresAt);
    }
    if (credential.kind === 'api_key') await this.apiKeys.recordUse(credential.keyId);
    return credential;
  }

  /** Forgets credentials revoked by any replica (or by hand in SQL) as the database announces them. */
  watchRevocations(listen: Listen): Promise<() => Promise<void>> {
    return this.cache.follow(listen);
  }

  /** What a client holding an OAuth token for another resource should do instead. */
  audienceHint(at: ProtectedResource): string {
    return `OAuth access tokens are good only at the resource they were requested for: use an API key, or an OAuth token requested with resource=${this.oauth.resourceIndicator(at)}.`;
  }
}
