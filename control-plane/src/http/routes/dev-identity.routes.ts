import { Router } from 'express';
import { DevIdentityProvider } from '../../services/dev-identity.ts';
import type { AppContext } from '../../runtime/app-context.ts';
import { rateLimit } from '../middleware/rate-limit.ts';
import { errorResponses, jsonResponse, type OpenAPIRegistry } from '../openapi.ts';
import { DevSignInRequest, DevSignInResult } from '../schemas/dev-identity.schemas.ts';
import { parseBody } from '../validation.ts';

const DEV_SIGN_IN_PATH = '/dev-identity/token';

/** Whether the development sign-in exists: only without an external identity provider (OIDC_*), on a loopback HOST (config.devSignIn). */
export const devSignInEnabled = (context: AppContext) => context.config.devSignIn;

/**
 * The web app's development sign-in: an email address in, an ID token of the built-in development identity
 * provider out — what `petsing dev-token` prints, for browsers. Mounted (and in /openapi.json) only while no
 * OIDC_* provider is configured; then the API trusts no other ID tokens, and the OAuth authorization page
 * signs people in the same way. Never mounted with a real provider: the route answers 404 there.
 */
export function devIdentityRoutes(context: AppContext): Router {
  const router = Router();
  const provider = new DevIdentityProvider(context.config.dataDir, context.config.baseUrl);
  router.post(DEV_SIGN_IN_PATH, rateLimit(context.services.rateLimiter, 'sign_in'), async (req, res) => {
    const { email } = parseBody(DevSignInRequest, req);
    const signedIn = await provider.signIn(email);
    res.set('Cache-Control', 'no-store');
    res.json(DevSignInResult.parse({ id_token: signedIn.idToken, token_type: 'Bearer', expires_in: signedIn.expiresIn, email: signedIn.email }));
  });
  return router;
}

export function registerDevIdentityPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post', path: DEV_SIGN_IN_PATH, security: [], tags: ['web-app'], operationId: 'devSignIn',
    summary: 'Development sign-in: an ID token for an email address',
    description:
      'Only while no external identity provider (OIDC_ISSUER, OIDC_AUDIENCE, OIDC_JWKS_URL) is configured: this operation is '
      + 'absent from the document and the path answers 404 once one is. Mints an ID token of the built-in development identity '
      + 'provider for the address, with no password, as `petsing dev-token --email` does; the web app\'s development sign-in uses it. '
      + 'For development only.',
    request: { body: { required: true, content: { 'application/json': { schema: DevSignInRequest } } } },
    responses: {
      200: jsonResponse('An ID token for the address.', DevSignInResult),
      ...errorResponses('invalid_request', 'malformed_json', 'nesting_too_deep', 'rate_limited'),
    },
  });
}
