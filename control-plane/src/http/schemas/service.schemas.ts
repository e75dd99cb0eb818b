import { z } from 'zod';

export const ServiceIndex = z
  .object({
    name: z.string(),
    description: z.string(),
    specification_url: z.url().meta({ description: 'The OpenAPI 3.1 document.' }),
    documentation_url: z.url(),
    api_base_url: z.url().meta({ description: 'Base address of the current public API version.' }),
    versions_url: z.url(),
    websocket_url: z.url().meta({ description: 'Websocket for live video status events.' }),
    mcp_url: z.url(),
    public_endpoints: z.array(z.string()).meta({ description: 'Endpoints that need no credentials, as "METHOD /path".' }),
  })
  .meta({ id: 'ServiceIndex' });

const Template = z
  .object({
    id: z.string().meta({ description: 'Numeric string; send back exactly as given.', example: '1' }),
    name: z.string(),
    description: z.string(),
    duration_seconds: z.number().meta({ description: 'Length of the song, and so of a video made from it.' }),
    audio_url: z.url().meta({ description: 'The song itself (MP3).' }),
    preview_image_url: z.url().nullable().meta({ description: 'Preview still.' }),
    preview_video_url: z.url().nullable().meta({ description: 'Example clip; null until it has been rendered.' }),
  })
  .meta({ id: 'Template' });

export const TemplateArray = z.array(Template).meta({ id: 'TemplateArray' });

const isoDate = z.iso.date();

const ApiVersion = z
  .object({
    version: z.string(),
    status: z.enum(['current', 'deprecated', 'sunset']),
    base_url: z.url(),
    released: isoDate,
    deprecated_on: isoDate.nullable(),
    sunset_on: isoDate.nullable(),
  })
  .meta({ id: 'ApiVersion' });

export const VersionsDocument = z
  .object({
    current: z.string(),
    versions: z.array(ApiVersion),
    policy: z.object({
      scheme: z.literal('url_path'),
      description: z.string().optional(),
      breaking_changes: z.array(z.string()).optional(),
      non_breaking_changes: z.array(z.string()).optional(),
      notice_period_days: z.number().int(),
      signals: z.array(z.string()),
      documentation_url: z.url().optional(),
    }),
  })
  .meta({ id: 'VersionsDocument' });

const Check = z.object({ ok: z.boolean() });
const QueueCheck = z.object({ ok: z.boolean(), pollers: z.int().min(0).meta({ description: 'Workers Temporal saw polling the queue in the last minutes.' }) });

export const Readiness = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    checks: z.object({
      database: Check,
      temporal: Check,
      queues: z.object({
        control: QueueCheck.meta({ description: 'Not ok without a control worker: nothing would run a workflow.' }),
        render: QueueCheck.meta({ description: 'Reported only: render nodes may be scaled to zero while no render waits.' }),
      }),
    }),
  })
  .meta({ id: 'Readiness' });

