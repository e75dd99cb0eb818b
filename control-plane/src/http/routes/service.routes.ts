import { Router } from 'express';
import { z } from 'zod';
import { versionsDocument } from '../../services/api-versions.ts';
import { templateAssets } from '../../templates/template-objects.ts';
import { templateMediaUrl } from '../../presenters/api.presenter.ts';
import type { AppContext } from '../../runtime/app-context.ts';
import { buildOpenApiDocument, errorResponses, jsonResponse, type OpenAPIRegistry, type OpenApiContributor } from '../openapi.ts';
import { Readiness, ServiceIndex, TemplateArray, VersionsDocument } from '../schemas/service.schemas.ts';
import { parseParams } from '../validation.ts';
import { renderDocsPage, renderErrorDocsPage } from '../docs-page.ts';
import { sendObject } from '../send-object.ts';

/** Endpoints that need no credentials, as listed by the service index. */
const PUBLIC_ENDPOINTS = [
  'GET /',
  'GET /openapi.json',
  'GET /health',
  'GET /health/ready',
  'GET /templates',
  'GET /subscription/pricing',
  'GET /versions',
  'GET /email/unsubscribe',
  'POST /email/unsubscribe',
];

const templateMediaParams = z.object({
  id: z.string().meta({ description: 'A template id from GET /templates.', example: '1' }),
  asset: z.enum(templateAssets),
});
const binary = { schema: z.string().meta({ format: 'binary' }) };

export function serviceRoutes(context: AppContext, openApiContributors: OpenApiContributor[]): Router {
  const { baseUrl, siteUrl, wsUrl } = context.config;
  const router = Router();
  let openApiDocument: unknown;

  router.get('/', (_req, res) => {
    res.json(
      ServiceIndex.parse({
        name: 'petsing',
        description: 'Turns a photo of a pet plus audio into a lip-synced singing video.',
        specification_url: `${baseUrl}/openapi.json`,
        documentation_url: `${baseUrl}/docs`,
        api_base_url: `${baseUrl}/v1`,
        versions_url: `${baseUrl}/versions`,
        websocket_url: wsUrl,
        mcp_url: `${baseUrl}/mcp`,
        public_endpoints: PUBLIC_ENDPOINTS,
      }),
    );
  });

  router.get('/health', (_req, res) => {
    res.type('text/html').send('OK');
  });

  router.get('/health/ready', async (_req, res) => {
    const { ready, checks } = await context.services.health.readiness();
    res.set('Cache-Control', 'no-store').status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks });
  });

  router.get('/versions', (_req, res) => {
    res.json(versionsDocument(baseUrl, context.apiVersions));
  });

  router.get('/openapi.json', (_req, res) => {
    openApiDocument ??= buildOpenApiDocument(baseUrl, siteUrl, openApiContributors);
    res.json(openApiDocument);
  });

  router.get('/docs', (_req, res) => {
    res.type('text/html').send(renderDocsPage(context.config));
  });

  router.get('/docs/errors', (_req, res) => {
    res.type('text/html').send(renderErrorDocsPage());
  });

  router.get('/templates', async (_req, res) => {
    const templates = await context.services.templates.list();
    res.set('Cache-Control', 'public, max-age=3600');
    res.json(
      templates.map((template) => ({
        id: String(template.id),
        name: template.name,
        description: template.description,
        duration_seconds: template.audio_duration_ms / 1000,
        audio_url: templateMediaUrl(baseUrl, template, 'audio'),
        preview_image_url: templateMediaUrl(baseUrl, template, 'preview-image'),
        preview_video_url: templateMediaUrl(baseUrl, template, 'preview-video'),
      })),
    );
  });

  router.get('/media/templates/:id/:asset', async (req, res) => {
    const { id, asset } = parseParams(templateMediaParams, req);
    const object = await context.services.templates.media(id, asset);
    await sendObject(res, object, { 'Content-Type': object.contentType, 'Cache-Control': 'public, max-age=86400' });
  });

  return router;
}

export function registerServicePaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get', path: '/', security: [], tags: ['service'], operationId: 'getServiceIndex', summary: 'Service index',
    responses: { 200: jsonResponse('Where to find the specification, documentation and credential-free endpoints.', ServiceIndex) },
  });
  registry.registerPath({
    method: 'get', path: '/health', security: [], tags: ['service'], operationId: 'getHealth', summary: 'Liveness check',
    responses: { 200: { description: 'The literal text OK.', content: { 'text/html': { schema: z.literal('OK') } } } },
  });
  registry.registerPath({
    method: 'get', path: '/health/ready', security: [], tags: ['service'], operationId: 'getReadiness', summary: 'Readiness check',
    description: 'Ready when the database and Temporal answer and a control worker polls its queue (what a load balancer or a Kubernetes readiness probe asks).',
    responses: { 200: jsonResponse('Ready.', Readiness), 503: jsonResponse('Not ready: the checks say which part did not answer.', Readiness) },
  });
  registry.registerPath({
    method: 'get', path: '/versions', security: [], tags: ['service'], operationId: 'getVersions', summary: 'API versions and the versioning policy',
    responses: { 200: jsonResponse('Every version with its dates, and the policy.', VersionsDocument) },
  });
  registry.registerPath({
    method: 'get', path: '/openapi.json', security: [], tags: ['service'], operationId: 'getOpenApiDocument', summary: 'This OpenAPI 3.1 document',
    responses: { 200: { description: 'OpenAPI 3.1 document.', content: { 'application/json': { schema: z.object({}).loose() } } } },
  });
  registry.registerPath({
    method: 'get', path: '/templates', security: [], tags: ['service'], operationId: 'listTemplates', summary: 'Song templates, oldest id first',
    description: 'Cacheable for one hour.',
    responses: { 200: jsonResponse('Every template.', TemplateArray), ...errorResponses('internal_error') },
  });
  registry.registerPath({
    method: 'get', path: '/media/templates/{id}/{asset}', security: [], tags: ['service'], operationId: 'getTemplateMedia',
    summary: "A template's song or preview",
    description: 'The `audio_url`, `preview_image_url` and `preview_video_url` of GET /templates. Cacheable for a day.',
    request: { params: templateMediaParams },
    responses: {
      200: { description: 'The song (MP3), the preview image (PNG) or the preview video (MP4).', content: { 'audio/mpeg': binary, 'image/png': binary, 'video/mp4': binary } },
      ...errorResponses('invalid_request', 'not_found'),
    },
  });
}
