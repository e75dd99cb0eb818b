import express, { Router, type ErrorRequestHandler, type NextFunction, type Request, type Response } from 'express';
import type { z } from 'zod';
import type { OAuthClient } from '../../repositories/oauth.repository.ts';
import type { AppContext } from '../../runtime/app-context.ts';
import type { ClientRegistration } from '../../services/oauth-clients.ts';
import { AuthorizationPageError, AuthorizationRedirectError, OAuthError } from '../../services/oauth-errors.ts';
import { AUDIENCE_RULE } from '../../services/oauth-resources.ts';
import { findInvalidText, INVALID_TEXT_MESSAGE } from '../../services/text.ts';
import type { IssuedTokens } from '../../services/oauth-tokens.ts';
import type { Logger } from '../../logging/logger.ts';
import { AppError } from '../../errors/app-error.ts';
import { requestBodyError } from '../errors.ts';
import { rateLimit } from '../middleware/rate-limit.ts';
import { jsonBody } from '../json-body.ts';
import { logRequestFailure } from '../request-logging.ts';
import { requireWebUser, webUserOf } from '../middleware/web-auth.ts';
import { errorResponses, jsonResponse, type OpenAPIRegistry } from '../openapi.ts';
import { idTokenSecurity } from './web-app.routes.ts';
import {
  AuthorizationDecisionRequest,
  AuthorizationRedirect,
  AuthorizationRequestDetails,
  AuthorizationRequestError,
  AuthorizationRequestQuery,
  AuthorizationServerMetadata,
  OAuthClientInformation,
  OAuthClientRegistrationRequest,
  OAuthErrorResponse,
  OAuthTokenRequest,
  OAuthTokenResponse,
  ProtectedResourceMetadata,
} from '../schemas/oauth.schemas.ts';

/** Largest OAuth request body, form or JSON, in kB: a registration with ten 2,000-character redirect URIs fits. */
const BODY_LIMIT_KB = 32;
/** Most parameters a form body may carry (the token endpoint reads eight). */
const FORM_PARAMETER_LIMIT = 50;
/** The error code of a request the endpoint cannot read (RFC 7591 §3.2.2, RFC 6749 §5.2). */
const MALFORMED_REGISTRATION = 'invalid_client_metadata';
const MALFORMED_TOKEN_REQUEST = 'invalid_request';
const AUTHORIZATION_REQUEST_PATH = '/oauth/authorization-request';
const AUTHORIZATION_DECISION_PATH = '/oauth/authorization-decision';
/** RFC 9728 path-suffixed variants, which MCP clients look up for the resource they were given. */
const PROTECTED_RESOURCE_PATHS = ['', '/v1', '/mcp'];

/** Discovery, registration and token endpoints: OAuth clients on any origin call them from browsers. */
export const OAUTH_CLIENT_PATHS = ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource', '/oauth/register', '/oauth/token'];

/**
 * The OAuth 2.1 authorization server: metadata, registration, the token endpoint, and the two JSON endpoints
 * behind the web app's authorization page ({SITE_URL}/oauth/authorize, served by site.ts). It parses its own
 * bodies (mounted before the app's JSON parser), so that even a body that cannot be read is answered in the
 * endpoint's RFC shape.
 */
export function oauthRoutes(context: AppContext): Router {
  const { baseUrl } = context.config;
  const oauth = context.services.oauth;
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: `${BODY_LIMIT_KB}kb`, parameterLimit: FORM_PARAMETER_LIMIT });
  const json = jsonBody(BODY_LIMIT_KB);
  // Counted per client address before the body is read: neither endpoint needs a credential.
  const limited = rateLimit(context.services.rateLimiter, 'sign_in');

  router.get('/.well-known/oauth-authorization-server', (_req, res) => {
    res.json(oauth.authorizationServerMetadata());
  });
  for (const suffix of PROTECTED_RESOURCE_PATHS) {
    router.get(`/.well-known/oauth-protected-resource${suffix}`, (_req, res) => {
      res.json(oauth.protectedResourceMetadata(`${baseUrl}${suffix}`));
    });
  }

  router.post('/oauth/register', limited, json, async (req, res) => {
    const client = await oauth.register(parseClientRegistration(req.body));
    res.status(201).set('Cache-Control', 'no-store').json(clientInformation(client));
  });
  router.use('/oauth/register', asOAuthError(MALFORMED_REGISTRATION, context.logger));

  router.post('/oauth/token', limited, form, json, async (req, res) => {
    const tokens = await oauth.token(req.body);
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json(tokenResponse(tokens));
  });
  router.use('/oauth/token', asOAuthError(MALFORMED_TOKEN_REQUEST, context.logger));

  // The authorization page reads the request it was opened with (no credential: it shows a registered client's
  // public name, and lets the page refuse a bad request before asking anyone to sign in)...
  router.get(AUTHORIZATION_REQUEST_PATH, async (req, res) => {
    const details = await oauth.describeAuthorizationRequest(req.query);
    res.set('Cache-Control', 'no-store').json(details);
  });
  // ...and sends the signed-in person's decision. Only an ID token in the Authorization header approves: a
  // cross-site form cannot send one (no cookie, so no CSRF), and API keys and OAuth tokens are refused.
  router.post(AUTHORIZATION_DECISION_PATH, requireWebUser(context.services.identity), json, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const { decision, ...params } = body;
    const redirectTo = await oauth.decide(params, decision, webUserOf(res));
    res.set('Cache-Control', 'no-store').json({ redirect_to: redirectTo });
  });
  router.use(AUTHORIZATION_DECISION_PATH, (error: unknown, _req: Request, _res: Response, next: NextFunction) => {
    // A body the parser refused is an OAuth error like the rest; a refused ID token keeps the web app's shape.
    const bodyError = requestBodyError(error);
    next(bodyError ? new OAuthError('invalid_request', bodyError.message, bodyError.status) : error);
  });

  router.use(oauthErrors());
  return router;
}

/** The RFC 7591 client metadata of a registration request; a refusal is an RFC 7591 §3.2.2 error. */
function parseClientRegistration(body: unknown): ClientRegistration {
  // Not an object when the body was not JSON at all (another Content-Type, or none).
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OAuthError('invalid_client_metadata', 'The client metadata must be a JSON object, sent with Content-Type: application/json.');
  }
  // The text rule first, over every member sent, as for every other body (services/text.ts).
  const badText = findInvalidText(body);
  if (badText) {
    throw new OAuthError(badText[0] === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata', `${badText.join('.')}: ${INVALID_TEXT_MESSAGE}.`);
  }
  const parsed = OAuthClientRegistrationRequest.safeParse(body);
  if (!parsed.success) {
    const badRedirect = parsed.error.issues.some((issue) => issue.path[0] === 'redirect_uris');
    const description = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; ');
    throw new OAuthError(badRedirect ? 'invalid_redirect_uri' : 'invalid_client_metadata', description);
  }
  const { redirect_uris: redirectUris, client_name: clientName, grant_types: grantTypes } = parsed.data;
  return { redirectUris, clientName, grantTypes };
}

/** The registered client, as RFC 7591 §3.2.1 answers it. */
function clientInformation(client: OAuthClient): z.infer<typeof OAuthClientInformation> {
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

/** Issued tokens, as RFC 6749 §5.1 answers them. */
function tokenResponse(tokens: IssuedTokens): z.infer<typeof OAuthTokenResponse> {
  return {
    access_token: tokens.accessToken,
    token_type: 'Bearer',
    expires_in: tokens.expiresIn,
    ...(tokens.refreshToken ? { refresh_token: tokens.refreshToken } : {}),
    scope: tokens.scopes.join(' '),
  };
}

/**
 * The registration and token endpoints answer every failure as RFC 6749 / RFC 7591 JSON, never in the shared
 * error shape: a body their parser refused (malformed JSON 400, too large 413, unsupported charset or encoding
 * 415) as `malformed`, the endpoint's code for a request it cannot read, and anything unexpected as server_error.
 */
function asOAuthError(malformed: string, logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (error instanceof OAuthError) {
      next(error);
      return;
    }
    // A refusal before the endpoint ran (the rate limit's 429 with Retry-After), in the endpoint's shape.
    if (error instanceof AppError && error.status < 500) {
      res.set(error.headers);
      next(new OAuthError(error.code, error.message, error.status));
      return;
    }
    const bodyError = requestBodyError(error);
    if (bodyError) {
      next(new OAuthError(malformed, bodyError.message, bodyError.status));
      return;
    }
    logRequestFailure(logger, req, res, error);
    next(new OAuthError('server_error', 'The authorization server could not handle the request; retry later.', 500));
  };
}

/**
 * OAuth errors have their own wire format, RFC 6749/7591 JSON. An authorization request refused after its client
 * and redirect URI were verified also carries `redirect_to`, the error for the client (RFC 6749 §4.1.2.1), which
 * the page navigates to; one refused before that has none: the page shows it and never redirects.
 */
function oauthErrors(): ErrorRequestHandler {
  return (error: unknown, _req, res, next) => {
    const answer = (status: number, code: string, description: string, extra: Record<string, string> = {}) =>
      res.status(status).set({ 'Cache-Control': 'no-store' }).json({ error: code, error_description: description, message: description, ...extra });
    if (error instanceof OAuthError) answer(error.status, error.error, error.message);
    else if (error instanceof AuthorizationRedirectError) answer(400, error.error, error.message, { redirect_to: error.location });
    else if (error instanceof AuthorizationPageError) answer(400, 'invalid_request', error.message);
    else next(error);
  };
}

const oauthErrorResponse = (description: string) => jsonResponse(description, OAuthErrorResponse);
const serverErrorResponse = oauthErrorResponse('server_error: the authorization server failed; retry later.');
const signInLimitResponse = oauthErrorResponse(
  'rate_limited: more than RATE_LIMIT_SIGN_INS_PER_MINUTE (default 20) requests to /oauth/token, /oauth/register and /dev-identity/token ' +
    'together from this address in the current minute; Retry-After says when to retry.',
);

export function registerOAuthPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get', path: '/.well-known/oauth-authorization-server', security: [], tags: ['oauth'], operationId: 'getAuthorizationServerMetadata',
    summary: 'OAuth authorization server metadata (RFC 8414)',
    responses: { 200: jsonResponse('Endpoints, scopes, grants and PKCE methods of the authorization server.', AuthorizationServerMetadata) },
  });
  registry.registerPath({
    method: 'get', path: '/.well-known/oauth-protected-resource', security: [], tags: ['oauth'], operationId: 'getProtectedResourceMetadata',
    summary: 'OAuth protected resource metadata (RFC 9728)',
    description:
      'Also served for the /v1 and /mcp resources at /.well-known/oauth-protected-resource/v1 and /.well-known/oauth-protected-resource/mcp. ' +
      AUDIENCE_RULE,
    responses: { 200: jsonResponse('The resource, its authorization server and scopes.', ProtectedResourceMetadata) },
  });
  registry.registerPath({
    method: 'post', path: '/oauth/register', security: [], tags: ['oauth'], operationId: 'registerOAuthClient',
    summary: 'Register an OAuth client (RFC 7591)',
    description:
      `Open dynamic client registration for public clients (no client secret; PKCE protects the code). The body is a JSON object of at most ${BODY_LIMIT_KB} kB; ` +
      'every failure is an RFC 7591 error.',
    request: { body: { required: true, content: { 'application/json': { schema: OAuthClientRegistrationRequest } } } },
    responses: {
      201: jsonResponse('The registered client.', OAuthClientInformation),
      400: oauthErrorResponse(
        'invalid_redirect_uri (a redirect URI is refused, or holds a NUL or other control character) or invalid_client_metadata (other ' +
          'metadata refused or holding such a character, a field of the wrong type, malformed JSON, JSON nested more than 32 deep, or a body ' +
          'that is not application/json).',
      ),
      413: oauthErrorResponse(`invalid_client_metadata: the body is larger than ${BODY_LIMIT_KB} kB.`),
      415: oauthErrorResponse('invalid_client_metadata: the body\'s charset or Content-Encoding is not supported.'),
      429: signInLimitResponse,
      500: serverErrorResponse,
    },
  });
  registry.registerPath({
    method: 'post', path: '/oauth/token', security: [], tags: ['oauth'], operationId: 'requestOAuthToken',
    summary: 'Exchange an authorization code, or refresh (RFC 6749)',
    description:
      `Form-encoded as RFC 6749 requires; a JSON object is accepted too; at most ${BODY_LIMIT_KB} kB. Each parameter is a single string (sent once). ` +
      'Every failure is an RFC 6749 error; responses carry Cache-Control: no-store. ' +
      AUDIENCE_RULE,
    request: {
      body: {
        required: true,
        content: { 'application/x-www-form-urlencoded': { schema: OAuthTokenRequest }, 'application/json': { schema: OAuthTokenRequest } },
      },
    },
    responses: {
      200: jsonResponse('An access token and its rotated refresh token.', OAuthTokenResponse),
      400: oauthErrorResponse(
        'invalid_request (a missing, repeated or non-string parameter, one holding a NUL or other control character, malformed JSON, JSON ' +
          'nested more than 32 deep, or a body that is neither form-encoded nor JSON), ' +
          'invalid_grant, invalid_scope, invalid_target, unauthorized_client or unsupported_grant_type.',
      ),
      401: oauthErrorResponse('invalid_client: unknown client_id.'),
      413: oauthErrorResponse(`invalid_request: the body is larger than ${BODY_LIMIT_KB} kB, or has more than ${FORM_PARAMETER_LIMIT} parameters.`),
      415: oauthErrorResponse('invalid_request: the body\'s charset or Content-Encoding is not supported.'),
      429: signInLimitResponse,
      500: serverErrorResponse,
    },
  });
  registry.registerPath({
    method: 'get', path: AUTHORIZATION_REQUEST_PATH, security: [], tags: ['oauth'], operationId: 'getAuthorizationRequest',
    summary: 'Check an authorization request (for the authorization page)',
    description:
      'The web app\'s authorization page ({SITE_URL}/oauth/authorize) sends the query it was opened with, unchanged, and shows the answer: ' +
      'the client\'s registered name, where the person will be sent back, and the scopes in words. No credential: the page checks the request ' +
      'before asking the person to sign in. PKCE with S256 is required; the redirect URI must be exactly one the client registered.',
    request: { query: AuthorizationRequestQuery },
    responses: {
      200: jsonResponse('A valid request, in the words the page shows.', AuthorizationRequestDetails),
      400: jsonResponse(
        'The request is refused. With redirect_to (client and redirect URI verified; e.g. invalid_request for missing or plain PKCE, ' +
          'unsupported_response_type, invalid_scope, invalid_target): the page sends the person there. Without (invalid_request: no or unknown ' +
          'client_id, a redirect URI the client did not register, unreadable text): the page shows the error and never redirects.',
        AuthorizationRequestError,
      ),
    },
  });
  registry.registerPath({
    method: 'post', path: AUTHORIZATION_DECISION_PATH, security: idTokenSecurity, tags: ['oauth'], operationId: 'decideAuthorizationRequest',
    summary: 'Allow or deny an authorization request (for the authorization page)',
    description:
      'The signed-in person\'s decision. Only an ID token in the Authorization header is accepted (no cookie, so a cross-site form cannot ' +
      'forge a decision; API keys and OAuth tokens answer 401): the code is issued to the token\'s account. The request is checked again exactly ' +
      `as by GET ${AUTHORIZATION_REQUEST_PATH}. The body is JSON of at most ${BODY_LIMIT_KB} kB.`,
    request: { body: { required: true, content: { 'application/json': { schema: AuthorizationDecisionRequest } } } },
    responses: {
      200: jsonResponse(
        'Where to send the person: the redirect URI with a single-use code (allow) or error=access_denied (deny), with state and iss.',
        AuthorizationRedirect,
      ),
      400: jsonResponse(
        `As for GET ${AUTHORIZATION_REQUEST_PATH}; also invalid_request for a decision other than allow or deny, or a body that is not JSON.`,
        AuthorizationRequestError,
      ),
      ...errorResponses('unauthorized', 'not_found', 'conflict'),
      413: oauthErrorResponse(`invalid_request: the body is larger than ${BODY_LIMIT_KB} kB.`),
    },
  });
}
