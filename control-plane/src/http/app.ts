import express, { type Express } from 'express';
import type { AppContext } from '../runtime/app-context.ts';
import { errorHandler, notFoundHandler } from './errors.ts';
import { requestLogging } from './request-logging.ts';
import { filesRoutes } from './routes/files.routes.ts';
import { hostedAudioRoutes } from './routes/hosted-audio.routes.ts';
import { webAppRoutes } from './routes/web-app.routes.ts';
import { mcpRoutes } from './routes/mcp.routes.ts';
import { oauthRoutes } from './routes/oauth.routes.ts';
import { openApiContributors } from './routes/index.ts';
import { publicApiRoutes } from './routes/public-api.routes.ts';
import { serviceRoutes } from './routes/service.routes.ts';

const JSON_BODY_LIMIT = '100kb';

export function createApp(context: AppContext): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', context.config.env.TRUST_PROXY);
  app.use(requestLogging(context.logger));
  app.use(express.json({ limit: JSON_BODY_LIMIT }));

  app.use(serviceRoutes(context, openApiContributors));
  app.use(filesRoutes(context));
  app.use(hostedAudioRoutes(context));
  app.use(webAppRoutes(context));
  app.use('/v1', publicApiRoutes(context));
  app.use('/mcp', mcpRoutes(context));
  app.use(oauthRoutes(context));

  app.use(notFoundHandler());
  app.use(errorHandler(context.config.baseUrl));
  return app;
}
