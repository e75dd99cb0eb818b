import type { ApiCredential, ApiKeyService } from './api-key.service.ts';

/** Resolves a bearer credential presented to /v1 or /mcp: an API key, or an OAuth access token. */
export class CredentialService {
  constructor(private readonly apiKeys: ApiKeyService) {}

  async verify(token: string): Promise<ApiCredential | undefined> {
    if (this.apiKeys.isApiKey(token)) return this.apiKeys.authenticate(token);
    return undefined;
  }
}
