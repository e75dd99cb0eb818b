import type { User } from '../db/schema.ts';
import { SCOPE_DESCRIPTIONS, SCOPES, isScope } from '../domain/scopes.ts';
import type { Scope } from '../domain/scopes.ts';
import type { OAuthClient, OAuthRepository } from '../repositories/oauth.repository.ts';
import { isLoopbackUrl } from './oauth-clients.ts';
import { AuthorizationPageError, AuthorizationRedirectError } from './oauth-errors.ts';
import { audienceOf, DEFAULT_AUDIENCE, isResource, RESOURCE_NAMES, resourceList, secondsFromNow } from './oauth-resources.ts';
import type { OAuthSettings } from './oauth-resources.ts';
import { hashSecret, randomToken } from './secrets.ts';
import { findInvalidText, INVALID_TEXT_MESSAGE } from './text.ts';

/**
 * The authorization request (RFC 6749 §4.1.1 with PKCE and resource indicators): checked for the web app's
 * authorization page, described to the person, and answered with a single-use code or a denial, each sent
 * back to the client's verified redirect URI with the issuer (RFC 9207).
 */

const DEFAULT_SCOPES: Scope[] = ['videos:read'];
const CODE_PREFIX = 'pso_ac_';
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export type AuthorizationRequest = {
  client: OAuthClient;
  redirectUri: string;
  scopes: Scope[];
  state: string | undefined;
  codeChallenge: string;
  resource: string | undefined;
};

/** Space-separated scopes, each known; the default when absent. Undefined when invalid. */
export function parseScopes(scope: unknown): Scope[] | undefined {
  if (scope === undefined || scope === '') return DEFAULT_SCOPES;
  if (typeof scope !== 'string') return undefined;
  const requested = [...new Set(scope.split(' ').filter(Boolean))];
  if (requested.length === 0 || !requested.every(isScope)) return undefined;
  return (requested as Scope[]).sort();
}

export class OAuthAuthorization {
  constructor(
    private readonly repository: OAuthRepository,
    private readonly settings: OAuthSettings,
  ) {}

  /**
   * Validates the authorization request (the query of {SITE_URL}/oauth/authorize, which the authorization page
   * sends on to GET /oauth/authorization-request and POST /oauth/authorization-decision). Throws AuthorizationPageError until the client and its redirect URI are verified,
   * AuthorizationRedirectError after.
   */
  async validate(params: Record<string, unknown>): Promise<AuthorizationRequest> {
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
    if (!scopes) throw refuse('invalid_scope', `scope must be made of ${SCOPES.join(', ')}.`);
    const resource = params.resource;
    if (resource !== undefined && (typeof resource !== 'string' || !isResource(this.settings, resource))) {
      throw refuse('invalid_target', `resource must be one of ${resourceList(this.settings)}.`);
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
      redirect_is_local: isLoopbackUrl(redirect),
      scopes: request.scopes.map((scope) => ({ scope, description: SCOPE_DESCRIPTIONS[scope] })),
      resource_name: RESOURCE_NAMES[audienceOf(this.settings, request.resource ?? null) ?? DEFAULT_AUDIENCE],
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

  private redirectTo(redirectUri: string, params: Record<string, string>, state: string | undefined): string {
    const url = new URL(redirectUri);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    if (state !== undefined) url.searchParams.set('state', state);
    url.searchParams.set('iss', this.settings.issuer);
    return url.toString();
  }
}
