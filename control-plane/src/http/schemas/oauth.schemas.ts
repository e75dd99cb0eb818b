import { z } from 'zod';
import { SCOPES, ScopeSchema } from '../../domain/scopes.ts';
import { GRANT_TYPES, isAllowedRedirectUri } from '../../services/oauth-clients.ts';
import { BIDI_CONTROLS_MESSAGE, isDisplayableName } from '../../services/text.ts';

/**
 * The wire format of the OAuth endpoints. Client registration is validated with its schema here (by
 * oauth.routes.ts, which answers a refusal as RFC 7591 asks); the token and authorization endpoints check
 * their parameters in the order their RFCs answer them (services/oauth-tokens.ts, oauth-authorization.ts),
 * so their schemas below describe them for the OpenAPI document. Errors follow RFC 6749 and RFC 7591 rather
 * than the shared error shape.
 */

const scopeList = z.array(ScopeSchema);

const redirectUri = z
  .string()
  .max(2000)
  .refine(isAllowedRedirectUri, 'must be an absolute https URL, or http on a loopback host, without a fragment')
  .meta({ format: 'uri' });

export const OAuthClientRegistrationRequest = z
  .object({
    redirect_uris: z
      .array(redirectUri)
      .min(1)
      .max(10)
      .meta({ description: 'Exact redirect URIs: https, or http on a loopback host (localhost, 127.0.0.1, [::1]); no fragment.' }),
    client_name: z
      .string()
      .refine(isDisplayableName, BIDI_CONTROLS_MESSAGE)
      .trim()
      .min(1)
      .max(200)
      .optional()
      .meta({ description: 'Shown on the consent page.', example: 'My MCP client' }),
    token_endpoint_auth_method: z
      .literal('none', { error: 'only public clients (none) can register' })
      .optional()
      .meta({ description: 'Only public clients: none.' }),
    grant_types: z
      .array(z.enum(GRANT_TYPES))
      .refine((types) => types.includes('authorization_code'), 'must include authorization_code')
      .optional()
      .meta({ description: 'Default: both.' }),
    response_types: z.array(z.literal('code')).min(1).optional(),
  })
  .meta({ id: 'OAuthClientRegistrationRequest', description: 'RFC 7591 client metadata; other members are ignored.' });

export const OAuthClientInformation = z
  .object({
    client_id: z.string(),
    client_id_issued_at: z.number().int().meta({ description: 'Seconds since the Unix epoch.' }),
    client_name: z.string(),
    redirect_uris: z.array(z.url()),
    grant_types: z.array(z.string()),
    response_types: z.array(z.literal('code')),
    token_endpoint_auth_method: z.literal('none'),
  })
  .meta({ id: 'OAuthClientInformation' });

export const OAuthTokenRequest = z
  .object({
    grant_type: z.enum(GRANT_TYPES),
    client_id: z.string(),
    code: z.string().optional().meta({ description: 'authorization_code grant.' }),
    redirect_uri: z.string().optional().meta({ description: 'authorization_code grant: exactly as in the authorization request.' }),
    code_verifier: z.string().optional().meta({ description: 'authorization_code grant: the PKCE verifier, 43 to 128 characters.' }),
    refresh_token: z.string().optional().meta({ description: 'refresh_token grant; the token is rotated on every use.' }),
    scope: z.string().optional().meta({ description: 'refresh_token grant: space-separated, may only narrow the granted scopes.' }),
    resource: z
      .url()
      .optional()
      .meta({
        description:
          'RFC 8707 resource indicator; must match the one bound at authorization, if any. It is the token\'s audience: {BASE_URL}/mcp for /mcp only; ' +
          '{BASE_URL}/v1 or {BASE_URL} (or none at all) for /v1 and the status websocket only.',
      }),
  })
  .meta({ id: 'OAuthTokenRequest' });

export const OAuthTokenResponse = z
  .object({
    access_token: z.string().meta({ description: 'Opaque; send as Authorization: Bearer on /v1 and /mcp.' }),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().meta({ description: 'Seconds until the access token expires.' }),
    refresh_token: z.string().optional().meta({ description: 'Single use: each refresh returns a new one, and reusing an old one revokes them all.' }),
    scope: z.string().meta({ description: 'Space-separated granted scopes.', example: SCOPES.join(' ') }),
  })
  .meta({ id: 'OAuthTokenResponse' });

export const OAuthErrorResponse = z
  .object({
    error: z.string().meta({ description: 'RFC 6749 §5.2 or RFC 7591 §3.2.2 error code.', example: 'invalid_grant' }),
    error_description: z.string(),
    message: z.string().meta({ description: 'Repeats error_description.' }),
  })
  .meta({ id: 'OAuthError' });

export const AuthorizationServerMetadata = z
  .object({
    issuer: z.url(),
    authorization_endpoint: z.url(),
    token_endpoint: z.url(),
    registration_endpoint: z.url(),
    scopes_supported: scopeList,
    response_types_supported: z.array(z.string()),
    response_modes_supported: z.array(z.string()),
    grant_types_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    code_challenge_methods_supported: z.array(z.string()),
    authorization_response_iss_parameter_supported: z.boolean(),
    service_documentation: z.url(),
  })
  .meta({ id: 'AuthorizationServerMetadata', description: 'RFC 8414 authorization server metadata.' });

export const ProtectedResourceMetadata = z
  .object({
    resource: z.url(),
    authorization_servers: z.array(z.url()),
    scopes_supported: scopeList,
    bearer_methods_supported: z.array(z.string()),
    resource_name: z.string().meta({ description: 'petsing API ({BASE_URL} and {BASE_URL}/v1) or petsing MCP server ({BASE_URL}/mcp).' }),
    resource_documentation: z.url(),
  })
  .meta({ id: 'ProtectedResourceMetadata', description: 'RFC 9728 protected resource metadata.' });

/** The authorization request's parameters (RFC 6749 §4.1.1, RFC 7636, RFC 8707), as the page received them in its query. */
const authorizationRequestFields = {
  response_type: z.literal('code'),
  client_id: z.string(),
  redirect_uri: z.string().meta({ description: 'Exactly one of the redirect URIs the client registered.' }),
  scope: z.string().optional().meta({ description: 'Space-separated; default videos:read.', example: SCOPES.join(' ') }),
  state: z.string().optional(),
  code_challenge: z.string().meta({ description: 'The base64url SHA-256 of the code verifier (43 characters).' }),
  code_challenge_method: z.literal('S256'),
  resource: z.string().optional().meta({ description: 'RFC 8707 resource indicator: {BASE_URL}, {BASE_URL}/v1 or {BASE_URL}/mcp.' }),
};

export const AuthorizationRequestQuery = z.object(authorizationRequestFields);

export const AuthorizationRequestDetails = z
  .object({
    client_id: z.string(),
    client_name: z.string().meta({ description: 'The name the client registered (not verified by anyone).' }),
    redirect_uri: z.url(),
    redirect_origin: z.string().meta({ description: 'Where the person is sent after deciding.', example: 'https://client.example' }),
    redirect_is_local: z.boolean().meta({ description: 'The redirect goes to a loopback address: an application on the person\'s own computer.' }),
    scopes: z.array(z.object({ scope: ScopeSchema, description: z.string() })),
    resource_name: z.string().meta({ description: 'The protected resource the token will be good for: petsing API or petsing MCP server.' }),
  })
  .meta({ id: 'AuthorizationRequestDetails', description: 'A valid authorization request, in the words the authorization page shows.' });

export const AuthorizationDecisionRequest = z
  .object({ ...authorizationRequestFields, decision: z.enum(['allow', 'deny']) })
  .meta({ id: 'AuthorizationDecisionRequest', description: 'The authorization request\'s parameters, unchanged, and the person\'s decision.' });

export const AuthorizationRedirect = z
  .object({ redirect_to: z.url().meta({ description: 'The client\'s redirect URI with code (or error), state and iss (RFC 9207): navigate there.' }) })
  .meta({ id: 'AuthorizationRedirect' });

export const AuthorizationRequestError = OAuthErrorResponse.extend({
  redirect_to: z
    .url()
    .optional()
    .meta({
      description:
        'Present once the client and redirect URI are verified: the error reported to the client (RFC 6749 §4.1.2.1); navigate there. ' +
        'Absent for an unknown client or an unregistered redirect URI, which are shown to the person and never redirected.',
    }),
}).meta({ id: 'AuthorizationRequestError' });
