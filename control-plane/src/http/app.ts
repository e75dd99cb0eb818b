import express, { type Express } from 'express';
import type { AppContext } from '../runtime/app-context.ts';
import { errorHandler, notFoundHandler } from './errors.ts';
import { compressResponses } from './middleware/compression.ts';
import { crossOrigin } from './middleware/cross-origin.ts';
import { requestMetrics } from './middleware/request-metrics.ts';
import { devIdentityRoutes, devSignInEnabled, registerDevIdentityPaths } from './routes/dev-identity.routes.ts';
import { buildOpenApiDocument, documentedMethods } from './openapi.ts';
import { requestLogging } from './request-logging.ts';
import { emailRoutes } from './routes/email.routes.ts';
import { filesRoutes } from './routes/files.routes.ts';
import { hostedAudioRoutes } from './routes/hosted-audio.routes.ts';
import { webAppRoutes } from './routes/web-app.routes.ts';
import { webDeveloperRoutes } from './routes/web-developer.routes.ts';
import { webVideosRoutes } from './routes/web-videos.routes.ts';
import { mcpRoutes } from './routes/mcp.routes.ts';
import { OAUTH_CLIENT_PATHS, oauthRoutes } from './routes/oauth.routes.ts';
import { openApiContributors } from './routes/index.ts';
import { publicApiRoutes } from './routes/public-api.routes.ts';
import { serviceRoutes } from './routes/service.routes.ts';
import { speechRoutes } from './routes/speech.routes.ts';
import { socialRoutes } from './routes/social.routes.ts';
import { stripeWebhookRoutes } from './routes/stripe-webhook.routes.ts';
import { subscriptionRoutes } from './routes/subscription.routes.ts';
import { siteRoutes } from './site.ts';
import { JSON_BODY_LIMIT_KB } from './validation.ts';
import { jsonBody } from './json-body.ts';

export function createApp(context: AppContext): Express {
  const app = express();
  app.disable('x-powered-by');
  // Every answer is the type it says, whatever its bytes look like: JSON, the web app, its assets, signed files.
  app.use((_req, res, next) => {
    res.set('X-Content-Type-Options', 'nosniff');
    next();
  });
  app.set('trust proxy', context.config.env.TRUST_PROXY);
  app.use(requestMetrics(context.services.metrics));
  app.use(requestLogging(context.logger));
  app.use(compressResponses());
  // OAuth clients on any origin use discovery, registration and tokens; /mcp has its own list (mcp.routes.ts);
  // everything else follows CORS_ALLOWED_ORIGINS.
  app.use(OAUTH_CLIENT_PATHS, crossOrigin('any'));
  const configured = crossOrigin(context.config.corsOrigins);
  const ownPolicy = (path: string) => ['/mcp', ...OAUTH_CLIENT_PATHS].some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  app.use((req, res, next) => (ownPolicy(req.path) ? next() : configured(req, res, next)));
  // Stripe signs the raw bytes: its webhook reads the body itself, before the JSON parser would. OAuth and MCP
  // parse their own bodies too, so that one they cannot read is answered in their wire format (RFC 6749 / 7591
  // JSON, JSON-RPC), not in the shared error shape.
  app.use(stripeWebhookRoutes(context));
  app.use(oauthRoutes(context));
  app.use('/mcp', mcpRoutes(context));
  app.use(jsonBody(JSON_BODY_LIMIT_KB));
  // First of the routers: a poll would otherwise walk past every route of the web app before reaching it.
  app.use('/v1', publicApiRoutes(context));

  // The development sign-in exists (and is documented) only while no OIDC_* provider is configured.
  const contributors = devSignInEnabled(context) ? [...openApiContributors, registerDevIdentityPaths] : openApiContributors;
  // The web app: `/` to browsers (the JSON index to everyone else), /app/* and /assets/* (site.ts).
  app.use(siteRoutes(context));
  app.use(serviceRoutes(context, contributors));
  if (devSignInEnabled(context)) app.use(devIdentityRoutes(context));
  app.use(filesRoutes(context));
  app.use(hostedAudioRoutes(context));
  app.use(emailRoutes(context));
  app.use(webAppRoutes(context));
  app.use(webDeveloperRoutes(context));
  app.use(subscriptionRoutes(context));
  app.use(webVideosRoutes(context));
  app.use(speechRoutes(context));
  app.use(socialRoutes(context));

  let allowedMethods: ((path: string) => string[] | undefined) | undefined;
  app.use(notFoundHandler((path) => {
    allowedMethods ??= documentedMethods(buildOpenApiDocument(context.config.baseUrl, context.config.siteUrl, contributors));
    return allowedMethods(path);
  }));
  app.use(errorHandler(context.config.baseUrl, context.logger));
  return app;
}
