import type { User } from '../db/schema.ts';
import { SCOPES } from '../domain/scopes.ts';
import type { OAuthClient, OAuthRepository } from '../repositories/oauth.repository.ts';
import type { CredentialCache } from './credential-cache.ts';
import { OAuthAuthorization } from './oauth-authorization.ts';
import { GRANT_TYPES, registerClient } from './oauth-clients.ts';
import { AuthorizationPageError } from './oauth-errors.ts';
import type { ClientRegistration } from './oauth-clients.ts';
import { audienceOf, DEFAULT_AUDIENCE, RESOURCE_NAMES } from './oauth-resources.ts';
import type { OAuthCredential, OAuthSettings, ProtectedResource } from './oauth-resources.ts';
import { OAuthTokens } from './oauth-tokens.ts';
import type { IssuedTokens } from './oauth-tokens.ts';

/**
 * The OAuth 2.1 authorization server for /v1 and /mcp: open dynamic client registration (RFC 7591,
 * oauth-clients.ts), authorization code with PKCE (S256 only) and resource indicators (RFC 8707), the
 * issuer in authorization responses (RFC 9207) (oauth-authorization.ts), rotating refresh tokens with reuse
 * detection (oauth-tokens.ts), its settings and audiences (oauth-resources.ts) and errors (oauth-errors.ts).
 * This class is the one the application holds, plus the discovery metadata (RFC 8414, RFC 9728).
 */
export class OAuthService {
  private readonly authorization: OAuthAuthorization;
  private readonly tokens: OAuthTokens;

  constructor(
    private readonly repository: OAuthRepository,
    private readonly settings: OAuthSettings,
    cache: CredentialCache,
  ) {
    this.authorization = new OAuthAuthorization(repository, settings);
    this.tokens = new OAuthTokens(repository, settings, cache);
  }

  authorizationServerMetadata() {
    const { issuer } = this.settings;
    return {
      issuer,
      authorization_endpoint: this.settings.authorizationEndpoint,
      token_endpoint: `${issuer}/oauth/token`,
      registration_endpoint: `${issuer}/oauth/register`,
      scopes_supported: [...SCOPES],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: [...GRANT_TYPES],
      token_endpoint_auth_methods_supported: ['none'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      service_documentation: this.settings.documentationUrl,
    };
  }

  /** RFC 9728 metadata for one of the resource indicators ({BASE_URL}, {BASE_URL}/v1 or {BASE_URL}/mcp). */
  protectedResourceMetadata(resource: string) {
    return {
      resource,
      authorization_servers: [this.settings.issuer],
      scopes_supported: [...SCOPES],
      bearer_methods_supported: ['header'],
      resource_name: RESOURCE_NAMES[audienceOf(this.settings, resource) ?? DEFAULT_AUDIENCE],
      resource_documentation: this.settings.documentationUrl,
    };
  }

  /** Registers a public client from metadata the HTTP layer has validated (RFC 7591). */
  register(registration: ClientRegistration): Promise<OAuthClient> {
    return registerClient(this.repository, registration);
  }

  /** GET /oauth/authorization-request: the request checked (see OAuthAuthorization.validate), in the words the page shows. */
  async describeAuthorizationRequest(params: Record<string, unknown>) {
    return this.authorization.describe(await this.authorization.validate(params));
  }

  /**
   * POST /oauth/authorization-decision: the request checked again exactly as for the page, then the signed-in
   * person's decision. Answers where to send them: the redirect URI with a single-use code (allow) or with
   * error=access_denied (deny).
   */
  async decide(params: Record<string, unknown>, decision: unknown, user: User): Promise<string> {
    // The decision is checked with the request (the text rule covers every member the page sent).
    const request = await this.authorization.validate({ ...params, decision });
    if (decision !== 'allow' && decision !== 'deny') throw new AuthorizationPageError('decision must be "allow" or "deny".');
    return decision === 'deny' ? this.authorization.denialRedirect(request) : this.authorization.approve(request, user);
  }

  /** The token endpoint (RFC 6749 §3.2), for public clients; `params` is the parsed body (undefined when there was none it could read). */
  token(params: unknown): Promise<IssuedTokens> {
    return this.tokens.token(params);
  }

  isAccessToken(token: string): boolean {
    return this.tokens.isAccessToken(token);
  }

  /** See OAuthTokens.authenticate. */
  authenticate(digest: string, at: ProtectedResource): Promise<{ credential: OAuthCredential; expiresAt: Date } | undefined> {
    return this.tokens.authenticate(digest, at);
  }

  /** The resource indicator a client must request for a token `at` accepts. */
  resourceIndicator(at: ProtectedResource): string {
    return `${this.settings.issuer}${at === 'mcp' ? '/mcp' : '/v1'}`;
  }
}
