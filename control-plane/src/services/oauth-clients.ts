import type { OAuthClient, OAuthRepository } from '../repositories/oauth.repository.ts';
import { randomToken } from './secrets.ts';

/**
 * OAuth clients: open dynamic registration (RFC 7591) of public clients, and which redirect URIs they may
 * register. The wire format of a registration (RFC 7591 JSON, validated) belongs to http/schemas/oauth.schemas.ts.
 */

export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
type GrantType = (typeof GRANT_TYPES)[number];

const CLIENT_ID_PREFIX = 'psc_';
const DEFAULT_CLIENT_NAME = 'Unnamed application';
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A registration, already validated. */
export type ClientRegistration = {
  redirectUris: string[];
  clientName?: string;
  grantTypes?: GrantType[];
};

/** Whether a URL's host is this computer's: an application on the person's own computer (a CLI, a desktop MCP client). */
export function isLoopbackUrl(url: URL): boolean {
  return LOOPBACK_HOSTS.has(url.hostname);
}

/** An absolute https URL, or http on a loopback host, without a fragment. */
export function isAllowedRedirectUri(value: string): boolean {
  if (!URL.canParse(value) || value.includes('#')) return false;
  const url = new URL(value);
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackUrl(url));
}

/** Registers a public client (no secret; PKCE protects its codes). */
export function registerClient(repository: OAuthRepository, registration: ClientRegistration): Promise<OAuthClient> {
  return repository.createClient({
    id: `${CLIENT_ID_PREFIX}${randomToken(18)}`,
    client_name: registration.clientName ?? DEFAULT_CLIENT_NAME,
    redirect_uris: [...new Set(registration.redirectUris)],
    grant_types: registration.grantTypes ? [...new Set(registration.grantTypes)] : [...GRANT_TYPES],
    token_endpoint_auth_method: 'none',
  });
}
