import { Router } from 'express';
import type { AppContext } from '../../runtime/app-context.ts';
import { requireWebUser, webUserOf } from '../middleware/web-auth.ts';
import { errorResponses, jsonResponse, securitySchemes, type OpenAPIRegistry } from '../openapi.ts';
import { WebAccount, WebVideoPage, WebVideoPageQuery } from '../schemas/web-app.schemas.ts';
import { parseQuery } from '../validation.ts';
import { webPresenter } from '../../presenters/web.presenter.ts';

/** GET /user/me and GET /user/videos: the signed-in user's account and videos. */
export function webAppRoutes(context: AppContext): Router {
  const router = Router();
  const signedIn = requireWebUser(context.services.identity);
  const { videos, credits, videoLinks } = context.services;
  const represent = webPresenter({ baseUrl: context.config.baseUrl, links: videoLinks });

  router.get('/user/me', signedIn, async (_req, res) => {
    res.set('Cache-Control', 'no-store');
    const user = webUserOf(res);
    res.json(represent.account(user, await credits.balance(user.id)));
  });

  router.get('/user/videos', signedIn, async (req, res) => {
    const { page, pageSize } = parseQuery(WebVideoPageQuery, req);
    res.set('Cache-Control', 'no-store');
    res.json(await represent.videoPage(await videos.page(webUserOf(res).id, page, pageSize)));
  });

  return router;
}

/** The OpenAPI `security` entry of every web-app endpoint. */
export const idTokenSecurity = [{ [securitySchemes.idToken]: [] }];

export function registerWebAppPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get', path: '/user/me', security: idTokenSecurity, tags: ['web-app'], operationId: 'getWebAccount', summary: 'The signed-in account',
    description: 'The account is created on the first request with a valid ID token carrying a verified email address.',
    responses: { 200: jsonResponse('Subscription state and the free credits left this month.', WebAccount), ...errorResponses('unauthorized', 'not_found') },
  });
  registry.registerPath({
    method: 'get', path: '/user/videos', security: idTokenSecurity, tags: ['web-app'], operationId: 'listWebVideos', summary: "One page of the caller's videos, newest first",
    request: { query: WebVideoPageQuery },
    responses: { 200: jsonResponse('A page of videos with render status and watermark state.', WebVideoPage), ...errorResponses('invalid_request', 'unauthorized') },
  });
}
