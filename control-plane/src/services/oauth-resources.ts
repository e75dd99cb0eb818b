import type { ControlPlaneConfig } from '../config/env.ts';
import type { Scope } from '../domain/scopes.ts';

/**
 * What the OAuth authorization server is configured with, above all the protected resources its access
 * tokens are for (RFC 8707 audiences), and the credential such a token proves at one of them.
 */

/**
 * The protected resources of this service, each an audience of OAuth access tokens (RFC 8707): the /v1 API
 * (and the status websocket, which reports on it) and the MCP server. A token is accepted only by its own,
 * so a token handed to one can never be replayed at the other (the MCP authorization spec requires it of /mcp).
 */
export type ProtectedResource = 'api' | 'mcp';

export type OAuthCredential = { userId: string; scopes: Scope[]; kind: 'oauth'; tokenId: string; clientId: string };

/**
 * A token requested without `resource` is for the API, the service's default resource: OAuth clients of /v1
 * need not know about resource indicators, while MCP clients must send resource={BASE_URL}/mcp, as the MCP
 * authorization spec requires of them (the MCP SDK's client sends the resource of the metadata that /mcp's
 * 401 points at).
 */
export const DEFAULT_AUDIENCE: ProtectedResource = 'api';

export const RESOURCE_NAMES: Record<ProtectedResource, string> = { api: 'petsing API', mcp: 'petsing MCP server' };

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

/** Whether `value` is one of the resource indicators this service answers to. */
export function isResource(settings: OAuthSettings, value: string): boolean {
  return Object.hasOwn(settings.resources, value);
}

/** The resource indicators, for error messages. */
export function resourceList(settings: OAuthSettings): string {
  return Object.keys(settings.resources).join(', ');
}

/**
 * The protected resource a token bound to `resource` is for; undefined for an indicator this service no
 * longer answers to (BASE_URL changed since), so such a token is good nowhere.
 */
export function audienceOf(settings: OAuthSettings, resource: string | null): ProtectedResource | undefined {
  if (resource === null) return DEFAULT_AUDIENCE;
  return isResource(settings, resource) ? settings.resources[resource] : undefined;
}

/** The expiry of something issued now that lives `seconds`. */
export function secondsFromNow(seconds: number): Date {
  return new Date(Date.now() + seconds * 1000);
}
