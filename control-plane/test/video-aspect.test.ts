import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MouthTrack, renderWorkflowId, type RenderLipSyncInput, type VideoAspect } from '@petsing/workflows';
import { connectTemporalClient } from '@petsing/platform/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMediaTool } from '../src/media/ffmpeg.ts';
import { templateObjectKeys } from '../src/templates/template-objects.ts';
import { createTestAccount, signInWebUser } from '../../test/support/accounts.ts';
import type { Json } from '../../test/support/http.ts';
import { startRenderingService, type startImageHost } from '../../test/support/image-host.ts';
import { expectDocumentedResponses, type RecordedResponse } from '../../test/support/openapi.ts';
import { waitFor } from '../../test/support/processes.ts';
import type { TestService } from '../../test/support/test-service.ts';
import { petPhoto } from '../../test/support/pet-photo.ts';
import { seedTemplates } from '../../test/support/templates.ts';

const ASPECTS: VideoAspect[] = ['square', '4:5', '9:16'];
/** Width over height of each shape. */
const RATIO: Record<VideoAspect, number> = { square: 1, '4:5': 4 / 5, '9:16': 9 / 16 };
/** Web creates point at the mouth, so the upload is not checked first (faces.test.ts covers the check). */
const MOUTH = JSON.stringify({ mouth: { x: 0.5, y: 0.6 } });
const BAD_ASPECTS: unknown[] = ['portrait', '16:9', 'SQUARE', '9x16', 5, null, ['square']];

/**
 * The optional `aspect` of every create surface (/v1, the web forms, MCP): validated, stored on the video,
 * answered in every video record, put on the render plan, handed to the render node's renderLipSync, and
 * rendered in that shape. Real HTTP API, Temporal dev server, control and render workers, Postgres.
 */
describe('video aspect', () => {
  let service: TestService;
  let imageHost: Awaited<ReturnType<typeof startImageHost>>;
  let temporal: Awaited<ReturnType<typeof connectTemporalClient>>;
  let scratch: string;
  let photo: Buffer;
  const recorded: RecordedResponse[] = [];

  const call = async (operation: string, method: string, path: string, token: string, body?: unknown) => {
    const form = body instanceof FormData;
    const response = await fetch(`${service.baseUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body !== undefined && !form ? { 'Content-Type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: form ? body : JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    const parsed = text ? (JSON.parse(text) as Json) : undefined;
    recorded.push({ operation, status: response.status, body: parsed });
    return { status: response.status, body: parsed as Json };
  };
  const createApi = (key: string, extra: Record<string, unknown> = {}) =>
    call('createApiVideo', 'POST', '/v1/videos', key, { template_id: '1', image_url: imageHost.url('/pet.png'), ...extra });
  const webForm = (fields: Record<string, string>) => {
    const form = new FormData();
    form.append('image', new Blob([photo], { type: 'image/png' }), 'pet.png');
    form.append('face', MOUTH);
    for (const [field, value] of Object.entries(fields)) form.append(field, value);
    return form;
  };
  const videoRow = (id: string) => service.database.db.selectFrom('videos').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const videoCount = async (userId: string) => (await service.database.db.selectFrom('videos').select('id').where('user_id', '=', userId).execute()).length;
  const balance = (userId: string) => service.context.services.credits.balance(userId);
  const freeCredits = async (token: string) => (await call('getWebAccount', 'GET', '/user/me', token)).body.free_credits as number;

  /** The input the render workflow scheduled renderLipSync with, read from the workflow's history once it is there. */
  const renderInput = async (videoId: string): Promise<RenderLipSyncInput> => {
    let input: RenderLipSyncInput | undefined;
    await waitFor('renderLipSync to be scheduled', async () => {
      const history = await temporal.client.workflow.getHandle(renderWorkflowId(videoId)).fetchHistory();
      const scheduled = (history.events ?? [])
        .map((event) => event.activityTaskScheduledEventAttributes)
        .find((attributes) => attributes?.activityType?.name === 'renderLipSync');
      const data = scheduled?.input?.payloads?.[0]?.data;
      if (data) input = JSON.parse(Buffer.from(data).toString('utf8')) as RenderLipSyncInput;
      return input !== undefined;
    }, 60_000);
    return input!;
  };
  /** Renders not under test are deleted at once, so the one render node is free for the one that is. */
  const discard = (userId: string, videoId: string) => service.context.services.videos.delete(userId, videoId);

  beforeAll(async () => {
    ({ service, imageHost } = await startRenderingService({ RATE_LIMIT_WRITES_PER_MINUTE: '100' }));
    await seedTemplates(service.context);
    temporal = await connectTemporalClient(service.context.config.env);
    scratch = await mkdtemp(join(tmpdir(), 'petsing-aspect-'));
    photo = await petPhoto(256);
  }, 180_000);
  afterAll(async () => {
    await temporal?.close();
    await service?.stop();
    await imageHost?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  describe('POST /v1/videos', () => {
    it.each(ASPECTS)('renders a %s video: stored, answered, on the renderLipSync input, and the MP4 has that shape', async (shape) => {
      const owner = await createTestAccount(service.context, `render-${shape.replace(':', 'x')}@example.com`, 2);
      const { status, body } = await createApi(owner.readWrite, { aspect: shape });
      expect(status, JSON.stringify(body)).toBe(202);
      expect(body).toMatchObject({ status: 'processing', aspect: shape, credits_remaining: 1 });
      expect(await videoRow(body.id)).toMatchObject({ aspect: shape });
      // A template song also hands the render its score's mouth keyframes.
      const input = await renderInput(body.id);
      expect(input).toMatchObject({ jobId: body.id, aspect: shape, watermark: false, mouthTrackKey: templateObjectKeys(1).mouthTrack });
      const track = await service.context.objectStore.get(input.mouthTrackKey!);
      const chunks: Buffer[] = [];
      for await (const chunk of track.body) chunks.push(Buffer.from(chunk as Uint8Array));
      expect(MouthTrack.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8'))).success).toBe(true);

      let video: Json;
      await waitFor('the video to finish', async () => {
        video = (await call('getApiVideo', 'GET', `/v1/videos/${body.id}`, owner.readOnly)).body;
        return ['completed', 'failed'].includes(video.status);
      }, 240_000);
      expect(video).toMatchObject({ id: body.id, status: 'completed', aspect: shape, error: null });

      const file = join(scratch, `${body.id}.mp4`);
      await writeFile(file, Buffer.from(await (await fetch(video.video_url)).arrayBuffer()));
      const probe = JSON.parse(await runMediaTool('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height', '-of', 'json', file]));
      const { width, height } = probe.streams[0] as { width: number; height: number };
      // RENDER_OUTPUT_SIZE is 192 here: 192 wide, and as tall as the shape makes it (rounded to even pixels).
      expect(width).toBe(192);
      expect(Math.abs(width / height - RATIO[shape]), `${width}×${height}`).toBeLessThan(0.01);
    }, 300_000);

    it('stores and answers each aspect (square when none is sent) in the create, get and list records', async () => {
      const owner = await createTestAccount(service.context, 'shapes@example.com', 5);
      const cases: [VideoAspect | undefined, VideoAspect][] = [[undefined, 'square'], ...ASPECTS.map((aspect) => [aspect, aspect] as [VideoAspect, VideoAspect])];
      const created: { id: string; aspect: VideoAspect }[] = [];
      for (const [sent, expected] of cases) {
        const { status, body } = await createApi(owner.readWrite, sent ? { aspect: sent } : {});
        expect(status, JSON.stringify(body)).toBe(202);
        expect(body.aspect, String(sent)).toBe(expected);
        expect((await videoRow(body.id)).aspect, String(sent)).toBe(expected);
        expect((await call('getApiVideo', 'GET', `/v1/videos/${body.id}`, owner.readOnly)).body.aspect, String(sent)).toBe(expected);
        expect((await renderInput(body.id)).aspect, String(sent)).toBe(expected);
        created.push({ id: body.id, aspect: expected });
      }
      const list = (await call('listApiVideos', 'GET', '/v1/videos', owner.readOnly)).body;
      expect(Object.fromEntries(list.data.map((video: Json) => [video.id, video.aspect]))).toEqual(Object.fromEntries(created.map((video) => [video.id, video.aspect])));
      expect(await balance(owner.id)).toBe(1);
      for (const video of created) await discard(owner.id, video.id);
    }, 180_000);

    it('refuses an unknown aspect with 400 invalid_request and a hint naming the values, charging nothing', async () => {
      const owner = await createTestAccount(service.context, 'bad-shape@example.com', 2);
      for (const aspect of BAD_ASPECTS) {
        const { status, body } = await createApi(owner.readWrite, { aspect });
        expect([status, body.error.code], JSON.stringify(aspect)).toEqual([400, 'invalid_request']);
        expect(body.error.message, JSON.stringify(aspect)).toContain('aspect');
        for (const value of ASPECTS) expect(body.error.hint, JSON.stringify(aspect)).toContain(`"${value}"`);
        expect(body.error.documentation_url).toContain('#invalid_request');
      }
      // Idempotent retries refused the same way do not charge either.
      const keyed = await fetch(`${service.baseUrl}/v1/videos`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${owner.readWrite}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'bad-aspect-1' },
        body: JSON.stringify({ template_id: '1', image_url: imageHost.url('/pet.png'), aspect: 'wide' }),
      });
      expect(keyed.status).toBe(400);
      expect(await balance(owner.id)).toBe(2);
      expect(await videoCount(owner.id)).toBe(0);
    });
  });

  describe('web app', () => {
    it('takes the aspect form field on both creates, stores it and answers it in the queued video and the video page', async () => {
      const user = await signInWebUser(service, 'web-shape@example.com');
      const template = await call('createWebVideoWithTemplate', 'POST', '/create-with-template', user.token, webForm({ template_id: '1', aspect: '4:5' }));
      expect(template.status, JSON.stringify(template.body)).toBe(200);
      expect(template.body.video).toMatchObject({ id: template.body.id, aspect: '4:5', has_watermark: true });
      expect(await videoRow(template.body.id)).toMatchObject({ aspect: '4:5' });
      expect(await renderInput(template.body.id)).toMatchObject({ aspect: '4:5', watermark: true });
      await discard(user.id, template.body.id);

      const speech = await call('synthesizeSpeech', 'POST', '/tts', user.token, { text: 'Hello little cat, sing along with me today.', voice_id: 'en-us-female' });
      expect(speech.status, JSON.stringify(speech.body)).toBe(200);
      const audio = await call('createWebVideoWithAudio', 'POST', '/create-with-audio', user.token, webForm({ audio_url: speech.body.audio_url, aspect: '9:16' }));
      expect(audio.status, JSON.stringify(audio.body)).toBe(200);
      expect(audio.body.video).toMatchObject({ aspect: '9:16', template_id: null });
      expect(await videoRow(audio.body.id)).toMatchObject({ aspect: '9:16' });
      expect(await renderInput(audio.body.id)).toMatchObject({ aspect: '9:16' });

      const page = (await call('listWebVideos', 'GET', '/user/videos', user.token)).body;
      expect(page.videos.map((video: Json) => video.aspect)).toEqual(['9:16']);
      await discard(user.id, audio.body.id);
    }, 120_000);

    it('makes a square video when the field is left out or empty', async () => {
      const user = await signInWebUser(service, 'web-square@example.com');
      const forms: Record<string, string>[] = [{ template_id: '1' }, { template_id: '1', aspect: '' }];
      for (const fields of forms) {
        const { status, body } = await call('createWebVideoWithTemplate', 'POST', '/create-with-template', user.token, webForm(fields));
        expect(status, JSON.stringify(body)).toBe(200);
        expect(body.video.aspect).toBe('square');
        expect(await videoRow(body.id)).toMatchObject({ aspect: 'square' });
        await discard(user.id, body.id);
      }
    });

    it('refuses an unknown aspect field with 400 invalid_request and a hint, before spending a free credit', async () => {
      const user = await signInWebUser(service, 'web-bad-shape@example.com');
      for (const aspect of ['portrait', '16:9', 'Square']) {
        const { status, body } = await call('createWebVideoWithTemplate', 'POST', '/create-with-template', user.token, webForm({ template_id: '1', aspect }));
        expect([status, body.error.code], aspect).toEqual([400, 'invalid_request']);
        expect(body.error.message, aspect).toContain('"aspect"');
        for (const value of ASPECTS) expect(body.error.hint, aspect).toContain(`"${value}"`);
      }
      const audio = await call('createWebVideoWithAudio', 'POST', '/create-with-audio', user.token, webForm({ audio_url: `${service.baseUrl}/media/audio/none.mp3`, aspect: '1:1' }));
      expect([audio.status, audio.body.error.code]).toEqual([400, 'invalid_request']);
      expect(audio.body.error.hint).toContain('"9:16"');
      expect(await freeCredits(user.token)).toBe(2);
      expect(await videoCount(user.id)).toBe(0);
    });
  });

  describe('MCP', () => {
    it('create_video takes aspect (described in its input schema); get_video and list_videos answer it', async () => {
      const owner = await createTestAccount(service.context, 'mcp-shape@example.com', 2);
      const client = new McpClient({ name: 'petsing-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${service.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${owner.readWrite}` } } }));
      const tool = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
      try {
        const { tools } = await client.listTools();
        const createVideo = tools.find((entry) => entry.name === 'create_video')!;
        const property = (createVideo.inputSchema.properties as Record<string, Json>).aspect;
        expect(property).toMatchObject({ enum: ASPECTS, description: expect.stringContaining('9:16') });
        // With exactly one of template_id and audio_id, create_video may list no required field at all.
        expect(createVideo.inputSchema.required ?? []).not.toContain('aspect');
        expect(createVideo.description).toContain('aspect');

        const refused = await tool('create_video', { template_id: '1', image_url: imageHost.url('/pet.png'), aspect: 'portrait' });
        expect(refused.isError).toBe(true);
        expect(await balance(owner.id)).toBe(2);

        const created = await tool('create_video', { template_id: '1', image_url: imageHost.url('/pet.png'), aspect: '4:5' });
        expect(created.isError, JSON.stringify(created.content)).toBeFalsy();
        const { id, aspect } = created.structuredContent as { id: string; aspect: string };
        expect(aspect).toBe('4:5');
        expect(await videoRow(id)).toMatchObject({ aspect: '4:5' });
        expect(await renderInput(id)).toMatchObject({ aspect: '4:5' });
        expect((await tool('get_video', { video_id: id })).structuredContent).toMatchObject({ id, aspect: '4:5' });
        expect((await tool('list_videos', {})).structuredContent).toMatchObject({ data: [{ id, aspect: '4:5' }] });
        expect(await balance(owner.id)).toBe(1);
        await discard(owner.id, id);
      } finally {
        await client.close();
      }
    }, 120_000);
  });

  describe('render plan', () => {
    /** A finished video of the given shape, inserted directly, as the watermark purchase finds it. */
    const completedVideo = async (userId: string, aspect?: VideoAspect) =>
      (
        await service.database.db
          .insertInto('videos')
          .values({
            user_id: userId, origin: 'web', payment: 'free_credit', template_id: 1, status: 'completed', has_watermark: true,
            image_key: 'videos/x/image.png', output_key: 'videos/x/video.mp4', thumbnail_key: 'videos/x/thumbnail.jpg', ...(aspect ? { aspect } : {}),
          })
          .returningAll()
          .executeTakeFirstOrThrow()
      ).id;

    it('carries the video\'s aspect into the render and the watermark-removal re-render; a video without one is square', async () => {
      const user = await signInWebUser(service, 'plans@example.com');
      const { renders } = service.context.services;
      for (const aspect of ASPECTS) {
        const id = await completedVideo(user.id, aspect);
        expect(await renders.beginRerender(id)).toMatchObject({ videoId: id, watermark: false, aspect });
        expect(await renders.beginRender(id)).toMatchObject({ videoId: id, watermark: true, aspect });
      }
      const legacy = await completedVideo(user.id);
      expect(await renders.beginRerender(legacy)).toMatchObject({ aspect: 'square' });
      await service.database.db.deleteFrom('videos').where('user_id', '=', user.id).execute();
    });
  });

  it('validates every recorded response against /openapi.json, and documents aspect on the creates and the video records', async () => {
    const checked = await expectDocumentedResponses(service.baseUrl, recorded);
    expect([...checked]).toEqual(expect.arrayContaining([
      'createApiVideo 202', 'createApiVideo 400', 'getApiVideo 200', 'listApiVideos 200', 'createWebVideoWithTemplate 200', 'createWebVideoWithTemplate 400',
      'createWebVideoWithAudio 200', 'listWebVideos 200',
    ]));
    const document = (await (await fetch(`${service.baseUrl}/openapi.json`)).json()) as Json;
    const schemas = document.components.schemas;
    expect(schemas.VideoAspect).toMatchObject({ type: 'string', enum: ASPECTS, description: expect.stringContaining('720×1280') });
    for (const name of ['CreateApiVideoRequest', 'CreateWithTemplateForm', 'CreateWithAudioForm']) {
      expect(schemas[name].properties.aspect, name).toMatchObject({ enum: ASPECTS, default: 'square', description: expect.stringContaining('720×900') });
      expect(schemas[name].required ?? [], name).not.toContain('aspect');
    }
    for (const name of ['ApiVideo', 'WebVideo', 'CreatedApiVideo']) {
      expect(schemas[name].properties.aspect, name).toEqual({ $ref: '#/components/schemas/VideoAspect' });
      expect(schemas[name].required, name).toContain('aspect');
    }
  });
});
