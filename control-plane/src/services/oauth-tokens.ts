import { createHash, randomUUID } from 'node:crypto';
import type { Scope } from '../domain/scopes.ts';
import type { NewOAuthToken, OAuthClient, OAuthRepository } from '../repositories/oauth.repository.ts';
import type { CredentialCache } from './credential-cache.ts';
import { parseScopes } from './oauth-authorization.ts';
import { GRANT_TYPES } from './oauth-clients.ts';
import { OAuthError } from './oauth-errors.ts';
import { audienceOf, isResource, resourceList, secondsFromNow } from './oauth-resources.ts';
import type { OAuthCredential, OAuthSettings, ProtectedResource } from './oauth-resources.ts';
import { constantTimeEqual, hashSecret, randomToken } from './secrets.ts';
import { findInvalidText, INVALID_TEXT_MESSAGE } from './text.ts';

/**
 * Access and refresh tokens: the token endpoint (RFC 6749 §3.2) for public clients, redeeming a code with
 * PKCE or rotating a refresh token with reuse detection, and the lookup of a presented access token. Tokens
 * are opaque; only their SHA-256 digests are stored.
 */

/** Prefixes make leaked tokens recognisable by secret scanners and tell them apart from API keys. */
export const ACCESS_TOKEN_PREFIX = 'pso_at_';
const REFRESH_TOKEN_PREFIX = 'pso_rt_';
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** Token request parameters that must each be one string (RFC 6749 §3.2: sent at most once); resource is RFC 8707's, checked on its own. */
const SINGLE_VALUED_TOKEN_PARAMETERS = ['grant_type', 'client_id', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'scope'];

/** What a successful token request issued; http/routes/oauth.routes.ts answers it as RFC 6749 §5.1 JSON. */
export type IssuedTokens = {
  accessToken: string;
  /** Seconds. */
  expiresIn: number;
  refreshToken?: string;
  scopes: Scope[];
};

type Grant = { client: OAuthClient; userId: string; scopes: Scope[]; refreshScopes: Scope[]; familyId: string; codeHash: string | null; resource: string | null };

export class OAuthTokens {
  constructor(
    private readonly repository: OAuthRepository,
    private readonly settings: OAuthSettings,
    private readonly cache: CredentialCache,
  ) {}

  /** The token endpoint; `params` is the parsed body (undefined when there was none it could read). */
  async token(params: unknown): Promise<IssuedTokens> {
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
    if (!token || audienceOf(this.settings, token.resource) !== at) return undefined;
    return { credential: { userId: token.user_id, scopes: token.scopes, kind: 'oauth', tokenId: token.id, clientId: token.client_id }, expiresAt: token.expires_at };
  }

  private async authenticateClient(clientId: unknown): Promise<OAuthClient> {
    if (typeof clientId !== 'string' || clientId === '') throw new OAuthError('invalid_request', 'client_id is required.');
    const client = await this.repository.findClient(clientId);
    if (!client) throw new OAuthError('invalid_client', 'Unknown client_id; register the client at /oauth/register first.', 401);
    return client;
  }

  private async redeemCode(client: OAuthClient, params: Record<string, unknown>): Promise<IssuedTokens> {
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

  private async refresh(client: OAuthClient, params: Record<string, unknown>): Promise<IssuedTokens> {
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

  private async issue(repository: OAuthRepository, grant: Grant): Promise<IssuedTokens> {
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
      accessToken,
      expiresIn: this.settings.accessTokenTtlSeconds,
      ...(refreshToken ? { refreshToken } : {}),
      scopes: grant.scopes,
    };
  }

  /** RFC 8707: a token request may repeat the resource its grant is bound to, or bind an unbound grant. */
  private bindResource(requested: unknown, bound: string | null): string | null | OAuthError {
    if (requested === undefined) return bound;
    if (typeof requested !== 'string' || !isResource(this.settings, requested) || (bound !== null && requested !== bound)) {
      return new OAuthError('invalid_target', bound ? `resource must be ${bound}, as in the authorization request.` : `resource must be one of ${resourceList(this.settings)}.`);
    }
    return requested;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
