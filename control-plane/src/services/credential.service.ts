import type { ApiCredential, ApiKeyService } from './api-key.service.ts';
import type { OAuthService } from './oauth.service.ts';

/** Resolves a bearer credential presented to /v1 or /mcp: an API key, or an OAuth access token. */
export class CredentialService {
  constructor(
    private readonly apiKeys: ApiKeyService,
    private readonly oauth: OAuthService,
  ) {}

  async verify(token: string): Promise<ApiCredential | undefined> {
    if (this.apiKeys.isApiKey(token)) return this.apiKeys.authenticate(token);
    if (this.oauth.isAccessToken(token)) return this.oauth.authenticate(token);
    return undefined;
  }
}
