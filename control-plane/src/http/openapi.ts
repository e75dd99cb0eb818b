import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import { SCOPE_DESCRIPTIONS, type Scope } from '../domain/scopes.ts';
import { errorCatalog, type ErrorCode } from '../errors/app-error.ts';
import { ErrorResponse } from './schemas/common.schemas.ts';

export { OpenAPIRegistry };

export const securitySchemes = {
  idToken: 'IdToken',
  apiKey: 'ApiKey',
  oauth: 'OAuth2',
} as const;

/** An operation's security: an API key (any scope), or an OAuth access token carrying `scopes`. */
export function credentialSecurity(...scopes: Scope[]): Record<string, string[]>[] {
  return [{ [securitySchemes.apiKey]: [] }, { [securitySchemes.oauth]: scopes }];
}

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
        scopes: { ...SCOPE_DESCRIPTIONS },
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
      { name: 'oauth', description: 'The OAuth 2.1 authorization server: discovery (RFC 8414, RFC 9728), dynamic client registration (RFC 7591) and the token endpoint (RFC 6749).' },
      { name: 'mcp', description: 'The Model Context Protocol server (Streamable HTTP, stateless), with API key or OAuth credentials.' },
    ],
  });
  const paths = (document.paths ?? {}) as Record<string, Record<string, Operation>>;
  addGenericClientErrors(paths);
  addInvalidPathResponses(paths);
  describeUniformTuplesAsArrays(document);
  return document;
}

/**
 * A tuple whose members share one schema (two eyes, two mouth corners) is described as an array of exactly
 * that many items rather than with `prefixItems`: the same constraint, and one that every OpenAPI tool
 * reads (schemathesis, for one, rejects the response schemas that use `prefixItems`).
 */
function describeUniformTuplesAsArrays(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) describeUniformTuplesAsArrays(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const schema = node as Record<string, unknown>;
  const members = schema.prefixItems;
  if (Array.isArray(members) && members.length > 0 && schema.items === undefined && members.every((member) => JSON.stringify(member) === JSON.stringify(members[0]))) {
    delete schema.prefixItems;
    Object.assign(schema, { items: members[0], minItems: members.length, maxItems: members.length });
  }
  for (const value of Object.values(schema)) describeUniformTuplesAsArrays(value);
}

type Operation = { responses?: Record<string, unknown>; parameters?: { in?: string }[] };
type ErrorResponseObject = { description: string; content?: Record<string, { schema?: { $ref?: string } }> };

const ERROR_SCHEMA_REF = '#/components/schemas/Error';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * Any request can fail as a client error (an unknown path answers 404 JSON, an unsupported method 405), so an operation
 * that names no 4XX response of its own gets the generic one.
 */
function addGenericClientErrors(paths: Record<string, Record<string, Operation>>): void {
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const responses = operation.responses;
      if (!responses || Object.keys(responses).some((status) => status.startsWith('4'))) continue;
      responses['4XX'] = {
        description: 'Client error in the shared error shape.',
        content: { 'application/json': { schema: { $ref: ERROR_SCHEMA_REF } } },
      };
    }
  }
}

/** A path parameter that is not valid percent-encoding answers 400 invalid_path, on every operation that has one. */
function addInvalidPathResponses(paths: Record<string, Record<string, Operation>>): void {
  const title = errorCatalog.invalid_path.title;
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const responses = operation.responses;
      if (!responses || !operation.parameters?.some((parameter) => parameter.in === 'path')) continue;
      const existing = responses['400'] as ErrorResponseObject | undefined;
      if (!existing) {
        responses['400'] = { description: title, content: { 'application/json': { schema: { $ref: ERROR_SCHEMA_REF } } } };
      } else if (existing.content?.['application/json']?.schema?.$ref === ERROR_SCHEMA_REF && !existing.description.includes(title)) {
        existing.description = `${existing.description}; ${title}`;
      }
    }
  }
}

/**
 * The methods /openapi.json documents for each path, as a lookup from a request path to the methods
 * it allows (undefined for a path the document does not have). Answers 405 with Allow from one source.
 */
export function documentedMethods(document: { paths?: Record<string, unknown> }): (path: string) => string[] | undefined {
  const templates = Object.entries(document.paths ?? {}).map(([template, item]) => {
    const methods = Object.keys(item as object).filter((key) => HTTP_METHODS.includes(key)).map((method) => method.toUpperCase());
    if (methods.includes('GET') && !methods.includes('HEAD')) methods.push('HEAD');
    const source = template
      .split(/(\{[^}]+\})/)
      .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    return { literal: !template.includes('{'), pattern: new RegExp(`^${source}/?$`, 'i'), methods };
  });
  return (path) => {
    const matches = templates.filter((entry) => entry.pattern.test(path));
    const best = matches.some((entry) => entry.literal) ? matches.filter((entry) => entry.literal) : matches;
    if (best.length === 0) return undefined;
    return [...new Set(best.flatMap((entry) => entry.methods))].sort();
  };
}
