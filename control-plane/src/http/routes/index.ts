import type { OpenApiContributor } from '../openapi.ts';
import { registerEmailPaths } from './email.routes.ts';
import { registerHostedAudioPaths } from './hosted-audio.routes.ts';
import { registerMcpPaths } from './mcp.routes.ts';
import { registerOAuthPaths } from './oauth.routes.ts';
import { registerPublicApiPaths } from './public-api.routes.ts';
import { registerServicePaths } from './service.routes.ts';
import { registerSpeechPaths } from './speech.routes.ts';
import { registerSocialPaths } from './social.routes.ts';
import { registerStripeWebhookPaths } from './stripe-webhook.routes.ts';
import { registerSubscriptionPaths } from './subscription.routes.ts';
import { registerWebAppPaths } from './web-app.routes.ts';
import { registerWebDeveloperPaths } from './web-developer.routes.ts';
import { registerWebVideoPaths } from './web-videos.routes.ts';
import { registerWebhookPaths } from './webhook.routes.ts';

/** Every route module's OpenAPI paths; /openapi.json is built from these and the same zod schemas. */
export const openApiContributors: OpenApiContributor[] = [
  registerServicePaths,
  registerWebAppPaths,
  registerWebDeveloperPaths,
  registerSubscriptionPaths,
  registerStripeWebhookPaths,
  registerWebVideoPaths,
  registerHostedAudioPaths,
  registerEmailPaths,
  registerSpeechPaths,
  registerSocialPaths,
  registerPublicApiPaths,
  registerWebhookPaths,
  registerOAuthPaths,
  registerMcpPaths,
];
