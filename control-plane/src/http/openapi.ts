import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import { errorCatalog, type ErrorCode } from '../errors/app-error.ts';
import { ErrorResponse } from './schemas/common.schemas.ts';

export { OpenAPIRegistry };

export const securitySchemes = {
  idToken: 'IdToken',
  apiKey: 'ApiKey',
  oauth: 'OAuth2',
} as const;

/** A response entry for each error code an operation can answer with. */
export function errorResponses(...codes: ErrorCode[]): RouteConfig['responses'] {
  const responses: RouteConfig['responses'] = {};
  for (const code of codes) {
    const status = String(errorCatalog[code].status);
    const existing = responses[status];
    const description = existing && 'description' in existing ? `${existing.description}; ${errorCatalog[code].title}` : errorCatalog[code].title;
    responses[status] = { description, content: { 'application/json': { schema: ErrorResponse } } };
  }
  return responses;
}

export function jsonResponse(description: string, schema: z.ZodType, headers?: z.ZodObject) {
  return { description, content: { 'application/json': { schema } }, ...(headers ? { headers } : {}) };
}

export type OpenApiContributor = (registry: OpenAPIRegistry) => void;

export function buildOpenApiDocument(baseUrl: string, siteUrl: string, contributors: OpenApiContributor[]) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', securitySchemes.idToken, {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'An ID token (JWT) of the identity provider, obtained by signing in on the web site. Web-app endpoints only.',
  });
  registry.registerComponent('securitySchemes', securitySchemes.apiKey, {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (begins with psk_live_), created on the dashboard and shown once.',
  });
  registry.registerComponent('securitySchemes', securitySchemes.oauth, {
    type: 'oauth2',
    description: 'OAuth 2.1 authorization code flow with PKCE (S256 only). Dynamic client registration at /oauth/register.',
    flows: {
      authorizationCode: {
        authorizationUrl: `${siteUrl}/oauth/authorize`,
        tokenUrl: `${baseUrl}/oauth/token`,
        refreshUrl: `${baseUrl}/oauth/token`,
        scopes: {
          'videos:read': 'Read templates, videos and the credit balance.',
          'videos:write': 'Create and delete videos, spending credits.',
        },
      },
    },
  });
  for (const contribute of contributors) contribute(registry);

  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'petsing',
      version: '1.0.0',
      description: 'Turns a photo of a pet plus audio into a lip-synced singing video.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      contact: { name: 'petsing support', url: `${baseUrl}/docs` },
    },
    servers: [{ url: baseUrl }],
    tags: [
      { name: 'service', description: 'Service index, health, versions and templates.' },
      { name: 'web-app', description: 'Endpoints of the web app, signed in with an identity-provider ID token.' },
      { name: 'public-api', description: 'The versioned public API (/v1), paid with credits.' },
    ],
  });
  addGenericClientErrors((document.paths ?? {}) as Record<string, Record<string, unknown>>);
  return document;
}

/**
 * Any request can fail as a client error (an unknown path or method answers 404 JSON), so an operation
 * that names no 4XX response of its own gets the generic one.
 */
function addGenericClientErrors(paths: Record<string, Record<string, unknown>>): void {
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item) as { responses?: Record<string, unknown> }[]) {
      const responses = operation.responses;
      if (!responses || Object.keys(responses).some((status) => status.startsWith('4'))) continue;
      responses['4XX'] = {
        description: 'Client error in the shared error shape.',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
  }
}
