import type { Scope } from '../domain/scopes.ts';
import type { OAuthCredential } from './oauth-resources.ts';

/** Who is calling the API or MCP: an API key or an OAuth access token, with the scopes it was granted. */
export type ApiCredential = { userId: string; scopes: Scope[]; kind: 'api_key'; keyId: string } | OAuthCredential;
