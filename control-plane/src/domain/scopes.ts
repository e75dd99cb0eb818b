import { z } from 'zod';

/**
 * The scopes a credential (API key or OAuth access token) carries: the one list that the database check,
 * the OpenAPI document, OAuth metadata and consent page, API-key creation and the MCP tools all derive from.
 * (The database migrations spell it out in SQL, as they stood when they ran.)
 */
export const SCOPES = ['videos:read', 'videos:write'] as const;

export type Scope = (typeof SCOPES)[number];

/** One scope, as the wire carries it. */
export const ScopeSchema = z.enum(SCOPES);

/** What each scope allows, in the words of the OpenAPI document and the OAuth consent page. */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'videos:read': 'Read templates, videos and the credit balance.',
  'videos:write': 'Create and delete videos, spending credits.',
};

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
