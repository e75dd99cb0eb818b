import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ControlPlaneConfig } from '../config/env.ts';
import type { Scope, User } from '../db/schema.ts';
import type { NewOAuthToken, OAuthClient, OAuthRepository } from '../repositories/oauth.repository.ts';
import type { CredentialCache } from './credential-cache.ts';
import { constantTimeEqual, hashSecret, randomToken } from './secrets.ts';
import { BIDI_CONTROLS_MESSAGE, findInvalidText, INVALID_TEXT_MESSAGE, isDisplayableName, isValidText } from './text.ts';

/**
 * The OAuth 2.1 authorization server for /v1 and /mcp: open dynamic client registration (RFC 7591),
 * authorization code with PKCE (S256 only), rotating refresh tokens with reuse detection, resource
 * indicators (RFC 8707) and the issuer in authorization responses (RFC 9207). Tokens are opaque; only
 * their SHA-256 digests are stored.
 */

export const OAUTH_SCOPES = ['videos:read', 'videos:write'] as const satisfies readonly Scope[];
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'videos:read': 'Read templates, videos and the credit balance.',
  'videos:write': 'Create and delete videos, spending credits.',
};
const DEFAULT_SCOPES: Scope[] = ['videos:read'];
const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

/** Prefixes make leaked tokens recognisable by secret scanners and tell them apart from API keys. */
export const ACCESS_TOKEN_PREFIX = 'pso_at_';
export const REFRESH_TOKEN_PREFIX = 'pso_rt_';
const CODE_PREFIX = 'pso_ac_';
const CLIENT_ID_PREFIX = 'psc_';
const DEFAULT_CLIENT_NAME = 'Unnamed application';
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** Token request parameters that must each be one string (RFC 6749 §3.2: sent at most once); resource is RFC 8707's, checked on its own. */
const SINGLE_VALUED_TOKEN_PARAMETERS = ['grant_type', 'client_id', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'scope'];

/**
 * The protected resources of this service, each an audience of OAuth access tokens (RFC 8707): the /v1 API
 * (and the status websocket, which reports on it) and the MCP server. A token is accepted only by its own,
 * so a token handed to one can never be replayed at the other (the MCP authorization spec requires it of /mcp).
 */
export type ProtectedResource = 'api' | 'mcp';

/**
 * A token requested without `resource` is for the API, the service's default resource: OAuth clients of /v1
 * need not know about resource indicators, while MCP clients must send resource={BASE_URL}/mcp, as the MCP
 * authorization spec requires of them (the MCP SDK's client sends the resource of the metadata that /mcp's
 * 401 points at).
 */
const DEFAULT_AUDIENCE: ProtectedResource = 'api';

const RESOURCE_NAMES: Record<ProtectedResource, string> = { api: 'petsing API', mcp: 'petsing MCP server' };

/** The audience rule, as published in /openapi.json. */
export const AUDIENCE_RULE =
  'Access tokens are bound to the resource they were requested for (RFC 8707 resource indicator): a token for {BASE_URL}/mcp is ' +
  'accepted only at /mcp; a token for {BASE_URL}/v1 or {BASE_URL}, or requested without resource, only at /v1 and the status ' +
  'websocket. MCP clients must request resource={BASE_URL}/mcp; a token presented elsewhere answers 401 invalid_token.';

export type OAuthSettings = {
  issuer: string;
  authorizationEndpoint: string;
  documentationUrl: string;
  /** Each resource indicator a token may be requested for, and the protected resource it names. */
  resources: Record<string, ProtectedResource>;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  codeTtlSeconds: number;
};

export function oauthSettings(config: ControlPlaneConfig): OAuthSettings {
  const { baseUrl, siteUrl, env } = config;
  return {
    issuer: baseUrl,
    authorizationEndpoint: `${siteUrl}/oauth/authorize`,
    documentationUrl: `${baseUrl}/docs`,
    resources: { [baseUrl]: 'api', [`${baseUrl}/v1`]: 'api', [`${baseUrl}/mcp`]: 'mcp' },
    accessTokenTtlSeconds: env.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtlSeconds: env.OAUTH_REFRESH_TOKEN_TTL_SECONDS,
    codeTtlSeconds: env.OAUTH_CODE_TTL_SECONDS,
  };
}

export type OAuthCredential = { userId: string; scopes: Scope[]; kind: 'oauth'; tokenId: string; clientId: string };

/** An error answered to the client as RFC 6749 §5.2 / RFC 7591 §3.2.2 JSON. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

/**
 * An authorization request whose client or redirect URI could not be verified. It is shown to the
 * person, never redirected: redirecting to an unverified URI would make this an open redirector.
 */
export class AuthorizationPageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthorizationPageError';
  }
}

/** An authorization request error reported back to the verified redirect URI (RFC 6749 §4.1.2.1). */
export class AuthorizationRedirectError extends Error {
  constructor(
    readonly error: string,
    description: string,
    readonly location: string,
  ) {
    super(description);
    this.name = 'AuthorizationRedirectError';
  }
}

export type AuthorizationRequest = {
  client: OAuthClient;
  redirectUri: string;
  scopes: Scope[];
  state: string | undefined;
  codeChallenge: string;
  resource: string | undefined;
};

export type TokenResponse = {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
};

export type ClientInformation = {
  client_id: string;
  client_id_issued_at: number;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: ['code'];
  token_endpoint_auth_method: 'none';
};

const redirectUriSchema = z
  .string()
  .max(2000)
  .refine(isAllowedRedirectUri, 'must be an absolute https URL, or http on a loopback host, without a fragment');

const registrationSchema = z.object({
  redirect_uris: z.array(redirectUriSchema).min(1).max(10),
  client_name: z
    .string()
    .refine(isValidText, INVALID_TEXT_MESSAGE)
    .refine(isDisplayableName, BIDI_CONTROLS_MESSAGE)
    .trim()
    .min(1)
    .max(200)
    .optional(),
  token_endpoint_auth_method: z.literal('none', { error: 'only public clients (none) can register' }).optional(),
  grant_types: z
    .array(z.enum(GRANT_TYPES))
    .refine((types) => types.includes('authorization_code'), 'must include authorization_code')
    .optional(),
  response_types: z.array(z.literal('code')).min(1).optional(),
});

function isAllowedRedirectUri(value: string): boolean {
  if (!URL.canParse(value) || value.includes('#')) return false;
  const url = new URL(value);
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
}

export class OAuthService {
  constructor(
    private readonly repository: OAuthRepository,
    private readonly settings: OAuthSettings,
    private readonly cache: CredentialCache,
  ) {}

  authorizationServerMetadata() {
    const { issuer } = this.settings;
    return {
      issuer,
      authorization_endpoint: this.settings.authorizationEndpoint,
      token_endpoint: `${issuer}/oauth/token`,
      registration_endpoint: `${issuer}/oauth/register`,
      scopes_supported: [...OAUTH_SCOPES],
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
      scopes_supported: [...OAUTH_SCOPES],
      bearer_methods_supported: ['header'],
      resource_name: RESOURCE_NAMES[this.audienceOf(resource) ?? DEFAULT_AUDIENCE],
      resource_documentation: this.settings.documentationUrl,
    };
  }

  async register(metadata: unknown): Promise<ClientInformation> {
    // Undefined when the body was not JSON at all (another Content-Type, or none).
    if (!isPlainObject(metadata)) throw new OAuthError('invalid_client_metadata', 'The client metadata must be a JSON object, sent with Content-Type: application/json.');
    const parsed = registrationSchema.safeParse(metadata);
    if (!parsed.success) {
      const badRedirect = parsed.error.issues.some((issue) => issue.path[0] === 'redirect_uris');
      const description = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; ');
      throw new OAuthError(badRedirect ? 'invalid_redirect_uri' : 'invalid_client_metadata', description);
    }
    const input = parsed.data;
    const client = await this.repository.createClient({
      id: `${CLIENT_ID_PREFIX}${randomToken(18)}`,
      client_name: input.client_name ?? DEFAULT_CLIENT_NAME,
      redirect_uris: [...new Set(input.redirect_uris)],
      grant_types: input.grant_types ? [...new Set(input.grant_types)] : [...GRANT_TYPES],
      token_endpoint_auth_method: 'none',
    });
    return {
      client_id: client.id,
      client_id_issued_at: Math.floor(client.created_at.getTime() / 1000),
      client_name: client.client_name,
      redirect_uris: client.redirect_uris,
      grant_types: client.grant_types,
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  /**
   * Validates the authorization request (the query of {SITE_URL}/oauth/authorize, which the authorization page
   * sends on to GET /oauth/authorization-request and POST /oauth/authorization-decision). Throws AuthorizationPageError until the client and its redirect URI are verified,
   * AuthorizationRedirectError after.
   */
  async validateAuthorizationRequest(params: Record<string, unknown>): Promise<AuthorizationRequest> {
    const badText = findInvalidText(params);
    if (badText) throw new AuthorizationPageError(`The request's ${badText.join('.')} ${INVALID_TEXT_MESSAGE}.`);
    const clientId = params.client_id;
    if (typeof clientId !== 'string' || clientId === '') throw new AuthorizationPageError('The request names no client (client_id).');
    const client = await this.repository.findClient(clientId);
    if (!client) throw new AuthorizationPageError('The application that sent you here is not registered with petsing.');
    const redirectUri = params.redirect_uri;
    if (typeof redirectUri !== 'string' || !client.redirect_uris.includes(redirectUri)) {
      throw new AuthorizationPageError('The redirect URI in the request is not one that this application registered.');
    }

    const state = typeof params.state === 'string' ? params.state : undefined;
    const refuse = (error: string, description: string) =>
      new AuthorizationRedirectError(error, description, this.redirectTo(redirectUri, { error, error_description: description }, state));
    if (params.state !== undefined && state === undefined) throw refuse('invalid_request', 'state was sent more than once.');
    if (!client.grant_types.includes('authorization_code')) throw refuse('unauthorized_client', 'This client did not register the authorization_code grant.');
    if (params.response_type !== 'code') {
      throw params.response_type === undefined
        ? refuse('invalid_request', 'response_type is required.')
        : refuse('unsupported_response_type', 'Only response_type=code is supported.');
    }
    if (params.code_challenge_method !== 'S256') {
      throw refuse('invalid_request', 'PKCE is required with code_challenge_method=S256; plain is not accepted.');
    }
    const codeChallenge = params.code_challenge;
    if (typeof codeChallenge !== 'string' || !CODE_CHALLENGE.test(codeChallenge)) {
      throw refuse('invalid_request', 'code_challenge must be the base64url SHA-256 of the code verifier (43 characters).');
    }
    const scopes = parseScopes(params.scope);
    if (!scopes) throw refuse('invalid_scope', `scope must be made of ${OAUTH_SCOPES.join(', ')}.`);
    const resource = params.resource;
    if (resource !== undefined && (typeof resource !== 'string' || !this.isResource(resource))) {
      throw refuse('invalid_target', `resource must be one of ${this.resourceList()}.`);
    }
    return { client, redirectUri, scopes, state, codeChallenge, resource };
  }

  /** The person refused: tell the client so (RFC 6749 §4.1.2.1). */
  denialRedirect(request: AuthorizationRequest): string {
    return this.redirectTo(request.redirectUri, { error: 'access_denied', error_description: 'The person denied the request.' }, request.state);
  }

  /** What the authorization page shows the person before they decide. */
  describe(request: AuthorizationRequest) {
    const redirect = new URL(request.redirectUri);
    return {
      client_id: request.client.id,
      client_name: request.client.client_name,
      redirect_uri: request.redirectUri,
      redirect_origin: redirect.origin,
      // A loopback redirect means an application on the person's own computer (a CLI, a desktop MCP client).
      redirect_is_local: LOOPBACK_HOSTS.has(redirect.hostname),
      scopes: request.scopes.map((scope) => ({ scope, description: SCOPE_DESCRIPTIONS[scope] })),
      resource_name: RESOURCE_NAMES[this.audienceOf(request.resource ?? null) ?? DEFAULT_AUDIENCE],
    };
  }

  /** The signed-in person approved: issue a short-lived, single-use code bound to the request and to their account. */
  async approve(request: AuthorizationRequest, user: User): Promise<string> {
    const code = `${CODE_PREFIX}${randomToken(32)}`;
    await this.repository.createCode({
      code_hash: hashSecret(code),
      client_id: request.client.id,
      user_id: user.id,
      redirect_uri: request.redirectUri,
      scopes: request.scopes,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
      resource: request.resource ?? null,
      expires_at: secondsFromNow(this.settings.codeTtlSeconds),
    });
    return this.redirectTo(request.redirectUri, { code }, request.state);
  }

  /** The token endpoint (RFC 6749 §3.2), for public clients; `params` is the parsed body (undefined when there was none it could read). */
  async token(params: unknown): Promise<TokenResponse> {
    if (!isPlainObject(params)) {
      throw new OAuthError('invalid_request', 'Send the parameters as an application/x-www-form-urlencoded body (or as a JSON object).');
    }
    const badText = findInvalidText(params);
    if (badText) throw new OAuthError('invalid_request', `${badText.join('.')} ${INVALID_TEXT_MESSAGE}.`);
    const notOneString = SINGLE_VALUED_TOKEN_PARAMETERS.find((name) => params[name] !== undefined && typeof params[name] !== 'string');
    if (notOneString) throw new OAuthError('invalid_request', `${notOneString} must be a single string, sent once.`);
    const grantType = params.grant_type;
    if (typeof grantType !== 'string') throw new OAuthError('invalid_request', 'grant_type is required.');
    if (!(GRANT_TYPES as readonly string[]).includes(grantType)) {
      throw new OAuthError('unsupported_grant_type', `grant_type must be one of ${GRANT_TYPES.join(', ')}.`);
    }
    const client = await this.authenticateClient(params.client_id);
    if (!client.grant_types.includes(grantType)) throw new OAuthError('unauthorized_client', `This client did not register the ${grantType} grant.`);
    return grantType === 'authorization_code' ? this.redeemCode(client, params) : this.refresh(client, params);
  }

  isAccessToken(token: string): boolean {
    return token.startsWith(ACCESS_TOKEN_PREFIX);
  }

  /**
   * The credential of the live access token with this SHA-256 digest, issued for `at`, and when it expires;
   * undefined for any other token (RFC 8707 audience).
   */
  async authenticate(digest: string, at: ProtectedResource): Promise<{ credential: OAuthCredential; expiresAt: Date } | undefined> {
    const token = await this.repository.findActiveAccessToken(digest, new Date());
    if (!token || this.audienceOf(token.resource) !== at) return undefined;
    return { credential: { userId: token.user_id, scopes: token.scopes, kind: 'oauth', tokenId: token.id, clientId: token.client_id }, expiresAt: token.expires_at };
  }

  /** The resource indicator a client must request for a token `at` accepts. */
  resourceIndicator(at: ProtectedResource): string {
    return `${this.settings.issuer}${at === 'mcp' ? '/mcp' : '/v1'}`;
  }

  /**
   * The protected resource a token bound to `resource` is for; undefined for an indicator this service no
   * longer answers to (BASE_URL changed since), so such a token is good nowhere.
   */
  private audienceOf(resource: string | null): ProtectedResource | undefined {
    if (resource === null) return DEFAULT_AUDIENCE;
    return this.isResource(resource) ? this.settings.resources[resource] : undefined;
  }

  private async authenticateClient(clientId: unknown): Promise<OAuthClient> {
    if (typeof clientId !== 'string' || clientId === '') throw new OAuthError('invalid_request', 'client_id is required.');
    const client = await this.repository.findClient(clientId);
    if (!client) throw new OAuthError('invalid_client', 'Unknown client_id; register the client at /oauth/register first.', 401);
    return client;
  }

  private async redeemCode(client: OAuthClient, params: Record<string, unknown>): Promise<TokenResponse> {
    const { code, redirect_uri: redirectUri, code_verifier: verifier, resource } = params;
    if (typeof code !== 'string' || code === '') throw new OAuthError('invalid_request', 'code is required.');
    if (typeof redirectUri !== 'string') throw new OAuthError('invalid_request', 'redirect_uri is required.');
    if (typeof verifier !== 'string' || !CODE_VERIFIER.test(verifier)) {
      throw new OAuthError('invalid_request', 'code_verifier is required: 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_", "~".');
    }
    const codeHash = hashSecret(code);
    const now = new Date();
    // One transaction, so a concurrent replay waits for this exchange and then revokes what it issued.
    // Failures return rather than throw, so the code stays spent even when the exchange is refused.
    const outcome = await this.repository.transaction(async (repository) => {
      const record = await repository.consumeCode(codeHash, now);
      if (!record) {
        if (await repository.findCode(codeHash)) {
          this.cache.forget(await repository.revokeIssuedFromCode(codeHash, now));
          return new OAuthError('invalid_grant', 'The authorization code was already used; the tokens issued from it are revoked.');
        }
        return new OAuthError('invalid_grant', 'The authorization code is unknown.');
      }
      if (record.client_id !== client.id) return new OAuthError('invalid_grant', 'The authorization code was issued to another client.');
      if (record.expires_at <= now) return new OAuthError('invalid_grant', 'The authorization code has expired.');
      if (record.redirect_uri !== redirectUri) return new OAuthError('invalid_grant', 'redirect_uri differs from the one in the authorization request.');
      if (!constantTimeEqual(s256(verifier), record.code_challenge)) return new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge.');
      const bound = this.bindResource(resource, record.resource);
      if (bound instanceof OAuthError) return bound;
      return this.issue(repository, {
        client,
        userId: record.user_id,
        scopes: record.scopes,
        refreshScopes: record.scopes,
        familyId: randomUUID(),
        codeHash,
        resource: bound,
      });
    });
    if (outcome instanceof OAuthError) throw outcome;
    return outcome;
  }

  private async refresh(client: OAuthClient, params: Record<string, unknown>): Promise<TokenResponse> {
    const { refresh_token: refreshToken, scope, resource } = params;
    if (typeof refreshToken !== 'string' || refreshToken === '') throw new OAuthError('invalid_request', 'refresh_token is required.');
    const tokenHash = hashSecret(refreshToken);
    const now = new Date();
    const outcome = await this.repository.transaction(async (repository) => {
      const record = await repository.consumeRefreshToken(tokenHash, now);
      if (!record) {
        const known = await repository.findRefreshToken(tokenHash);
        // A rotated-out token coming back means two parties hold the family: stop them both (OAuth 2.1 §4.3.1).
        if (known?.used_at) this.cache.forget(await repository.revokeFamily(known.family_id, now));
        return new OAuthError('invalid_grant', 'The refresh token is invalid, expired, revoked or already used.');
      }
      if (record.client_id !== client.id) {
        // Someone other than its client holds this refresh token; treat the family as leaked.
        this.cache.forget(await repository.revokeFamily(record.family_id, now));
        return new OAuthError('invalid_grant', 'The refresh token was issued to another client.');
      }
      const scopes = scope === undefined ? record.scopes : parseScopes(scope);
      if (!scopes || !scopes.every((requested) => record.scopes.includes(requested))) {
        return new OAuthError('invalid_scope', 'scope may only narrow the scopes originally granted.');
      }
      const bound = this.bindResource(resource, record.resource);
      if (bound instanceof OAuthError) return bound;
      return this.issue(repository, {
        client,
        userId: record.user_id,
        scopes,
        // RFC 6749 §6: the new refresh token keeps the scope of the one it replaces.
        refreshScopes: record.scopes,
        familyId: record.family_id,
        codeHash: record.authorization_code_hash,
        resource: bound,
      });
    });
    if (outcome instanceof OAuthError) throw outcome;
    return outcome;
  }

  private async issue(
    repository: OAuthRepository,
    grant: { client: OAuthClient; userId: string; scopes: Scope[]; refreshScopes: Scope[]; familyId: string; codeHash: string | null; resource: string | null },
  ): Promise<TokenResponse> {
    const shared = { client_id: grant.client.id, user_id: grant.userId, family_id: grant.familyId, authorization_code_hash: grant.codeHash, resource: grant.resource };
    const accessToken = `${ACCESS_TOKEN_PREFIX}${randomToken(32)}`;
    const rows: NewOAuthToken[] = [
      { ...shared, kind: 'access', token_hash: hashSecret(accessToken), scopes: grant.scopes, expires_at: secondsFromNow(this.settings.accessTokenTtlSeconds) },
    ];
    const refreshToken = grant.client.grant_types.includes('refresh_token') ? `${REFRESH_TOKEN_PREFIX}${randomToken(32)}` : undefined;
    if (refreshToken) {
      rows.push({
        ...shared,
        kind: 'refresh',
        token_hash: hashSecret(refreshToken),
        scopes: grant.refreshScopes,
        expires_at: secondsFromNow(this.settings.refreshTokenTtlSeconds),
      });
    }
    await repository.insertTokens(rows);
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: this.settings.accessTokenTtlSeconds,
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
      scope: grant.scopes.join(' '),
    };
  }

  /** RFC 8707: a token request may repeat the resource its grant is bound to, or bind an unbound grant. */
  private bindResource(requested: unknown, bound: string | null): string | null | OAuthError {
    if (requested === undefined) return bound;
    if (typeof requested !== 'string' || !this.isResource(requested) || (bound !== null && requested !== bound)) {
      return new OAuthError('invalid_target', bound ? `resource must be ${bound}, as in the authorization request.` : `resource must be one of ${this.resourceList()}.`);
    }
    return requested;
  }

  private isResource(value: string): boolean {
    return Object.hasOwn(this.settings.resources, value);
  }

  private resourceList(): string {
    return Object.keys(this.settings.resources).join(', ');
  }

  private redirectTo(redirectUri: string, params: Record<string, string>, state: string | undefined): string {
    const url = new URL(redirectUri);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    if (state !== undefined) url.searchParams.set('state', state);
    url.searchParams.set('iss', this.settings.issuer);
    return url.toString();
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Space-separated scopes, each known; the default when absent. Undefined when invalid. */
function parseScopes(scope: unknown): Scope[] | undefined {
  if (scope === undefined || scope === '') return DEFAULT_SCOPES;
  if (typeof scope !== 'string') return undefined;
  const requested = [...new Set(scope.split(' ').filter(Boolean))];
  if (requested.length === 0 || !requested.every((name) => (OAUTH_SCOPES as readonly string[]).includes(name))) return undefined;
  return (requested as Scope[]).sort();
}

function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

function secondsFromNow(seconds: number): Date {
  return new Date(Date.now() + seconds * 1000);
}
