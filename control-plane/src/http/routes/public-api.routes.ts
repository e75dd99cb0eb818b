import { Router } from 'express';
import { CREDITS_PER_VIDEO } from '../../services/credit.service.ts';
import { CURRENT_API_VERSION, versionHeaders } from '../../services/api-versions.ts';
import type { AppContext } from '../../runtime/app-context.ts';
import { credentialOf, requireApiCredential, requireScope } from '../middleware/api-auth.ts';
import { errorResponses, jsonResponse, securitySchemes, type OpenAPIRegistry } from '../openapi.ts';
import { ApiAccount, ApiCredits, ApiTemplateList } from '../schemas/public-api.schemas.ts';
import { templateMediaUrl } from './service.routes.ts';

const RECENT_LEDGER_ENTRIES = 20;

export function publicApiRoutes(context: AppContext): Router {
  const { baseUrl } = context.config;
  const router = Router();
  const version = context.apiVersions.find((entry) => entry.version === CURRENT_API_VERSION);
  if (!version) throw new Error(`API version ${CURRENT_API_VERSION} is missing from the version registry`);

  router.use((_req, res, next) => {
    res.set(versionHeaders(baseUrl, version));
    next();
  });
  router.use(requireApiCredential((token) => context.services.credentials.verify(token), baseUrl));

  router.get('/templates', requireScope('videos:read'), async (_req, res) => {
    const templates = await context.services.templates.list();
    res.json({
      object: 'list',
      data: templates.map((template) => ({
        id: String(template.id),
        name: template.name,
        preview_video_url: templateMediaUrl(baseUrl, template, 'preview-video'),
        preview_image_url: templateMediaUrl(baseUrl, template, 'preview-image'),
      })),
    });
  });

  router.get('/me', requireScope('videos:read'), async (_req, res) => {
    const credential = credentialOf(res);
    res.json({
      user_id: credential.userId,
      credit_balance: await context.services.credits.balance(credential.userId),
      credits_per_video: CREDITS_PER_VIDEO,
      scopes: credential.scopes,
    });
  });

  router.get('/credits', requireScope('videos:read'), async (_req, res) => {
    const { userId } = credentialOf(res);
    const [balance, recent] = await Promise.all([
      context.services.credits.balance(userId),
      context.services.credits.recent(userId, RECENT_LEDGER_ENTRIES),
    ]);
    res.json({
      balance,
      credits_per_video: CREDITS_PER_VIDEO,
      recent: recent.map((entry) => ({ delta: entry.delta, reason: entry.reason, created_at: entry.created_at.toISOString() })),
    });
  });

  return router;
}

const readSecurity: Record<string, string[]>[] = [{ [securitySchemes.apiKey]: [] }, { [securitySchemes.oauth]: ['videos:read'] }];

export function registerPublicApiPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get', path: '/v1/templates', operationId: 'listApiTemplates', tags: ['public-api'], summary: 'List song templates',
    security: readSecurity,
    responses: { 200: jsonResponse('The templates.', ApiTemplateList), ...errorResponses('unauthorized', 'forbidden', 'rate_limited') },
  });
  registry.registerPath({
    method: 'get', path: '/v1/me', operationId: 'getApiAccount', tags: ['public-api'], summary: 'The calling account',
    security: readSecurity,
    responses: { 200: jsonResponse('The account behind the credential.', ApiAccount), ...errorResponses('unauthorized', 'forbidden', 'rate_limited') },
  });
  registry.registerPath({
    method: 'get', path: '/v1/credits', operationId: 'getApiCredits', tags: ['public-api'], summary: 'Credit balance and recent ledger entries',
    security: readSecurity,
    responses: { 200: jsonResponse('Balance and the most recent ledger entries, newest first.', ApiCredits), ...errorResponses('unauthorized', 'forbidden', 'rate_limited') },
  });
}
