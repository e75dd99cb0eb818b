import type { ApiCredential, ApiKeyService } from './api-key.service.ts';
import type { OAuthService, ProtectedResource } from './oauth.service.ts';

/** Resolves a bearer credential presented to /v1 or /mcp: an API key, or an OAuth access token. */
export class CredentialService {
  constructor(
    private readonly apiKeys: ApiKeyService,
    private readonly oauth: OAuthService,
  ) {}

  /**
   * The credential behind `token`, presented `at` one of the protected resources. An API key is good at
   * every one; an OAuth access token only at the resource it was issued for (RFC 8707 audience).
   */
  async verify(token: string, at: ProtectedResource): Promise<ApiCredential | undefined> {
    if (this.apiKeys.isApiKey(token)) return this.apiKeys.authenticate(token);
    if (this.oauth.isAccessToken(token)) return this.oauth.authenticate(token, at);
    return undefined;
  }

  /** What a client holding an OAuth token for another resource should do instead. */
  audienceHint(at: ProtectedResource): string {
    return `OAuth access tokens are good only at the resource they were requested for: use an API key, or an OAuth token requested with resource=${this.oauth.resourceIndicator(at)}.`;
  }
}
