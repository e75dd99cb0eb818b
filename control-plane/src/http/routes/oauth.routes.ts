import express, { Router, type ErrorRequestHandler, type Request, type Response } from 'express';
import type { AppContext } from '../../runtime/app-context.ts';
import {
  AuthorizationPageError,
  AuthorizationRedirectError,
  AUDIENCE_RULE,
  OAuthError,
  consentToken,
  isValidConsentToken,
  type AuthorizationRequest,
} from '../../services/oauth.service.ts';
import { randomToken } from '../../services/secrets.ts';
import { emailSchema } from '../../services/user.service.ts';
import { requestBodyError } from '../errors.ts';
import { AUTHORIZATION_PAGE_HEADERS, renderAuthorizationErrorPage, renderConsentPage } from '../oauth-pages.ts';
import { jsonResponse, type OpenAPIRegistry } from '../openapi.ts';
import {
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
const NONCE_COOKIE = 'petsing_oauth_nonce';
const NONCE = /^[A-Za-z0-9_-]{32,64}$/;
const NONCE_LIFETIME_MS = 3600_000;
/** RFC 9728 path-suffixed variants, which MCP clients look up for the resource they were given. */
const PROTECTED_RESOURCE_PATHS = ['', '/v1', '/mcp'];

/** Discovery, registration and token endpoints: OAuth clients on any origin call them from browsers. */
export const OAUTH_CLIENT_PATHS = ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource', '/oauth/register', '/oauth/token'];

/**
 * The OAuth 2.1 authorization server: metadata, registration, token endpoint and (embedded) the consent page.
 * It parses its own bodies (mounted before the app's JSON parser), so that even a body that cannot be read is
 * answered in the endpoint's RFC shape.
 */
export function oauthRoutes(context: AppContext): Router {
  const { baseUrl } = context.config;
  const oauth = context.services.oauth;
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: `${BODY_LIMIT_KB}kb`, parameterLimit: FORM_PARAMETER_LIMIT });
  const json = express.json({ limit: `${BODY_LIMIT_KB}kb` });

  router.get('/.well-known/oauth-authorization-server', (_req, res) => {
    res.json(oauth.authorizationServerMetadata());
  });
  for (const suffix of PROTECTED_RESOURCE_PATHS) {
    router.get(`/.well-known/oauth-protected-resource${suffix}`, (_req, res) => {
      res.json(oauth.protectedResourceMetadata(`${baseUrl}${suffix}`));
    });
  }

  router.post('/oauth/register', json, async (req, res) => {
    const client = await oauth.register(req.body);
    res.status(201).set('Cache-Control', 'no-store').json(client);
  });
  router.use('/oauth/register', asOAuthError(MALFORMED_REGISTRATION));

  router.post('/oauth/token', form, json, async (req, res) => {
    const tokens = await oauth.token(req.body);
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json(tokens);
  });
  router.use('/oauth/token', asOAuthError(MALFORMED_TOKEN_REQUEST));

  // With an external identity provider the web site at SITE_URL hosts the authorization page.
  if (!context.config.externalIdentityProvider) {
    const secure = baseUrl.startsWith('https:');
    const nonceOf = (req: Request, res: Response) => {
      const existing = readCookie(req, NONCE_COOKIE);
      if (existing && NONCE.test(existing)) return existing;
      const nonce = randomToken(32);
      res.cookie(NONCE_COOKIE, nonce, { httpOnly: true, sameSite: 'lax', secure, path: '/oauth/authorize', maxAge: NONCE_LIFETIME_MS });
      return nonce;
    };
    const showConsent = (res: Response, request: AuthorizationRequest, nonce: string, problem?: { email: string; error: string }) => {
      res.status(problem ? 400 : 200).set(AUTHORIZATION_PAGE_HEADERS).type('html');
      res.send(renderConsentPage({ request, csrfToken: consentToken(context.signingSecret, nonce, request), ...problem }));
    };

    router.get('/oauth/authorize', async (req, res) => {
      const request = await oauth.validateAuthorizationRequest(req.query);
      showConsent(res, request, nonceOf(req, res));
    });

    router.post('/oauth/authorize', form, async (req, res) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const request = await oauth.validateAuthorizationRequest(body);
      const nonce = readCookie(req, NONCE_COOKIE);
      if (!nonce || !isValidConsentToken(context.signingSecret, nonce, request, body.csrf_token)) {
        throw new AuthorizationPageError('This form expired or did not come from this page.');
      }
      if (body.decision === 'deny') {
        res.redirect(303, oauth.denialRedirect(request));
        return;
      }
      if (body.decision !== 'approve') throw new AuthorizationPageError('Choose Allow or Deny.');
      const email = emailSchema.safeParse(typeof body.email === 'string' ? body.email.trim() : '');
      if (!email.success) {
        showConsent(res, request, nonce, { email: String(body.email ?? ''), error: 'Enter a valid email address to sign in.' });
        return;
      }
      res.redirect(303, await oauth.approve(request, email.data));
    });
  }

  router.use(oauthErrors());
  return router;
}

function readCookie(req: Request, name: string): string | undefined {
  for (const pair of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = pair.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/**
 * The registration and token endpoints answer every failure as RFC 6749 / RFC 7591 JSON, never in the shared
 * error shape: a body their parser refused (malformed JSON 400, too large 413, unsupported charset or encoding
 * 415) as `malformed`, the endpoint's code for a request it cannot read, and anything unexpected as server_error.
 */
function asOAuthError(malformed: string): ErrorRequestHandler {
  return (error: unknown, req, _res, next) => {
    if (error instanceof OAuthError) {
      next(error);
      return;
    }
    const bodyError = requestBodyError(error);
    if (bodyError) {
      next(new OAuthError(malformed, bodyError.message, bodyError.status));
      return;
    }
    req.log?.error({ err: error }, 'request failed');
    next(new OAuthError('server_error', 'The authorization server could not handle the request; retry later.', 500));
  };
}

/** OAuth errors have their own wire formats: JSON per RFC 6749/7591, a redirect, or a page for a person. */
function oauthErrors(): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (error instanceof OAuthError) {
      res.status(error.status).set({ 'Cache-Control': 'no-store' });
      res.json({ error: error.error, error_description: error.message, message: error.message });
    } else if (error instanceof AuthorizationRedirectError) {
      res.redirect(req.method === 'POST' ? 303 : 302, error.location);
    } else if (error instanceof AuthorizationPageError) {
      res.status(400).set(AUTHORIZATION_PAGE_HEADERS).type('html').send(renderAuthorizationErrorPage(error.message));
    } else {
      next(error);
    }
  };
}

const oauthErrorResponse = (description: string) => jsonResponse(description, OAuthErrorResponse);
const serverErrorResponse = oauthErrorResponse('server_error: the authorization server failed; retry later.');

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
        'invalid_redirect_uri (a redirect URI is refused) or invalid_client_metadata (other metadata refused, a field of the wrong type, ' +
          'malformed JSON, or a body that is not application/json).',
      ),
      413: oauthErrorResponse(`invalid_client_metadata: the body is larger than ${BODY_LIMIT_KB} kB.`),
      415: oauthErrorResponse('invalid_client_metadata: the body\'s charset or Content-Encoding is not supported.'),
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
        'invalid_request (a missing, repeated or non-string parameter, malformed JSON, or a body that is neither form-encoded nor JSON), ' +
          'invalid_grant, invalid_scope, invalid_target, unauthorized_client or unsupported_grant_type.',
      ),
      401: oauthErrorResponse('invalid_client: unknown client_id.'),
      413: oauthErrorResponse(`invalid_request: the body is larger than ${BODY_LIMIT_KB} kB, or has more than ${FORM_PARAMETER_LIMIT} parameters.`),
      415: oauthErrorResponse('invalid_request: the body\'s charset or Content-Encoding is not supported.'),
      500: serverErrorResponse,
    },
  });
}
