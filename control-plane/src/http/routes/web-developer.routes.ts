import { Router } from 'express';
import type { ApiKey } from '../../db/schema.ts';
import { creditsRepresentation } from '../../presenters/api.presenter.ts';
import type { AppContext } from '../../runtime/app-context.ts';
import { requireWebUser, webUserOf } from '../middleware/web-auth.ts';
import { errorResponses, jsonResponse, type OpenAPIRegistry } from '../openapi.ts';
import { ApiCredits } from '../schemas/public-api.schemas.ts';
import { CreatedWebApiKey, CreateWebApiKeyRequest, WebApiKey, WebApiKeyList, WebApiKeyParams, WebCreditsQuery } from '../schemas/web-developer.schemas.ts';
import { parseBody, parseParams, parseQuery } from '../validation.ts';
import { idTokenSecurity } from './web-app.routes.ts';

const SCOPES_HINT = 'Send "scopes": ["videos:read"] for a read-only key, or ["videos:read", "videos:write"] for one that may also create and delete videos.';

const represent = (key: ApiKey) =>
  WebApiKey.parse({
    id: key.id,
    name: key.name,
    prefix: key.display_prefix,
    scopes: key.scopes,
    created_at: key.created_at.toISOString(),
    last_used_at: key.last_used_at?.toISOString() ?? null,
    revoked_at: key.revoked_at?.toISOString() ?? null,
  });

/**
 * The dashboard's developer page: the signed-in person's API keys (list, create, revoke) and API credits. ID
 * tokens only (requireWebUser refuses API keys and OAuth tokens), so no API key can create another key.
 */
export function webDeveloperRoutes(context: AppContext): Router {
  const router = Router();
  const signedIn = requireWebUser(context.services.identity);
  const { apiKeys, credits } = context.services;

  router.get('/user/api-keys', signedIn, async (_req, res) => {
    const keys = await apiKeys.list(webUserOf(res).id);
    res.set('Cache-Control', 'no-store');
    res.json({ keys: keys.map(represent) });
  });

  router.post('/user/api-keys', signedIn, async (req, res) => {
    const { name, scopes } = parseBody(CreateWebApiKeyRequest, req, { scopes: SCOPES_HINT });
    const { key, record } = await apiKeys.create({ userId: webUserOf(res).id, name, scopes: [...scopes] });
    res.set('Cache-Control', 'no-store');
    res.status(201).json({ key, api_key: represent(record) });
  });

  router.delete('/user/api-keys/:id', signedIn, async (req, res) => {
    const { id } = parseParams(WebApiKeyParams, req);
    await apiKeys.revokeActive(webUserOf(res).id, id);
    res.status(204).end();
  });

  router.get('/user/credits', signedIn, async (req, res) => {
    const { limit } = parseQuery(WebCreditsQuery, req);
    const statement = await credits.statement(webUserOf(res).id, limit);
    res.set('Cache-Control', 'no-store');
    res.json(creditsRepresentation(statement));
  });

  return router;
}

export function registerWebDeveloperPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get', path: '/user/api-keys', security: idTokenSecurity, tags: ['web-app'], operationId: 'listWebApiKeys', summary: "The caller's API keys",
    description: 'Newest first, revoked ones included; never the keys themselves (only their prefixes).',
    responses: { 200: jsonResponse('Every key of the account.', WebApiKeyList), ...errorResponses('unauthorized', 'not_found') },
  });
  registry.registerPath({
    method: 'post', path: '/user/api-keys', security: idTokenSecurity, tags: ['web-app'], operationId: 'createWebApiKey', summary: 'Create an API key',
    description: 'The answer carries the key in full, this once. Only an ID token may create keys: API keys and OAuth tokens answer 401.',
    request: { body: { required: true, content: { 'application/json': { schema: CreateWebApiKeyRequest } } } },
    responses: { 201: jsonResponse('The new key, shown once.', CreatedWebApiKey), ...errorResponses('invalid_request', 'malformed_json', 'nesting_too_deep', 'unauthorized', 'not_found') },
  });
  registry.registerPath({
    method: 'delete', path: '/user/api-keys/{id}', security: idTokenSecurity, tags: ['web-app'], operationId: 'revokeWebApiKey', summary: 'Revoke an API key',
    description: 'From then on the key answers 401 everywhere.',
    request: { params: WebApiKeyParams },
    responses: { 204: { description: 'Revoked.' }, ...errorResponses('invalid_request', 'unauthorized', 'not_found') },
  });
  registry.registerPath({
    method: 'get', path: '/user/credits', security: idTokenSecurity, tags: ['web-app'], operationId: 'getWebApiCredits', summary: "The caller's API credits and ledger",
    description: 'The same record as GET /v1/credits: the balance of prepaid API credits and the latest ledger entries (purchases, spends, refunds, grants), newest first.',
    request: { query: WebCreditsQuery },
    responses: { 200: jsonResponse('Balance and ledger.', ApiCredits), ...errorResponses('invalid_request', 'unauthorized', 'not_found') },
  });
}
