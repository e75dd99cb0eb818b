import type { OpenApiContributor } from '../openapi.ts';
import { registerHostedAudioPaths } from './hosted-audio.routes.ts';
import { registerMcpPaths } from './mcp.routes.ts';
import { registerOAuthPaths } from './oauth.routes.ts';
import { registerPublicApiPaths } from './public-api.routes.ts';
import { registerServicePaths } from './service.routes.ts';
import { registerWebAppPaths } from './web-app.routes.ts';

/** Every route module's OpenAPI paths; /openapi.json is built from these and the same zod schemas. */
export const openApiContributors: OpenApiContributor[] = [
  registerServicePaths,
  registerWebAppPaths,
  registerHostedAudioPaths,
  registerPublicApiPaths,
  registerOAuthPaths,
  registerMcpPaths,
];
