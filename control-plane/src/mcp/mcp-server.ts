import { McpServer, type ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { CallToolRequestSchema, type CallToolResult, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MAX_SPEECH_CHARACTERS } from '@petsing/workflows/api-rules';
import type { Video } from '../db/schema.ts';
import type { Scope } from '../domain/scopes.ts';
import { AppError } from '../errors/app-error.ts';
import { answerInvalidParams } from './invalid-params.ts';
import { apiPresenter, audioRepresentation, imageRepresentation } from '../presenters/api.presenter.ts';
import { errorBody, toAppError } from '../http/errors.ts';
import { assertScope } from '../http/middleware/api-auth.ts';
import { accountRateSubject, rateLimitedError } from '../http/middleware/rate-limit.ts';
import { FACE_HINT } from '../http/schemas/image.schemas.ts';
import { ASPECT_HINT } from '../http/schemas/video-aspect.schemas.ts';
import { parseToolArguments, type FieldHints } from '../http/validation.ts';
import { MAX_URL_LENGTH } from '../media/host-vetting.ts';
import { isTerminal, MAX_WAIT_SECONDS } from '../services/video-watch.service.ts';
import {
  ApiAccount,
  ApiAudio,
  ApiCredits,
  ApiVoiceList,
  ApiTemplateList,
  ApiVideo,
  ApiVideoList,
  CreateApiVideoRequest,
  CreatedApiVideo,
} from '../http/schemas/public-api.schemas.ts';
import { ApiImage, CheckImageUrlRequest } from '../http/schemas/image.schemas.ts';
import type { AppContext } from '../runtime/app-context.ts';
import type { ApiCredential } from '../services/api-credential.ts';

/**
 * The largest timeout_seconds wait_for_video takes. Its wait is capped at MAX_WAIT_SECONDS, as Prefer: wait is on /v1;
 * a larger value, up to this one, is accepted and capped so that agents written when the tool waited this long keep working.
 */
const MAX_TIMEOUT_SECONDS_ACCEPTED = 120;

// Schemas are passed as raw shapes (.shape): the /v1 schemas' registered ids would turn each root into a $ref,
// and MCP requires type object there.
const videoIdInput = { video_id: z.uuid().describe('The video id (uuid) returned by create_video or list_videos.') };

type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type ToolConfig<Input extends z.ZodRawShape> = {
  title: string;
  description: string;
  inputSchema?: Input;
  outputSchema: z.ZodRawShape;
  annotations: { readOnlyHint: boolean; destructiveHint?: boolean; idempotentHint: boolean; openWorldHint: boolean };
  /** Hints for refused arguments, the same /v1 gives for the same fields. */
  hints?: FieldHints;
};
type Tool = { input: z.ZodObject; output: z.ZodObject; hints: FieldHints; call: (args: unknown, extra: ToolExtra) => Promise<CallToolResult> };

/**
 * The MCP server of one request, acting for one credential. Every tool goes through the same services
 * and representations as /v1, so an agent sees exactly what the REST API would answer.
 */
export function getServer(context: AppContext, credential: ApiCredential): McpServer {
  const { baseUrl } = context.config;
  const { videos, videoWatch, images, rateLimiter, templates, credits, speech, audioRequests, videoLinks } = context.services;
  const represent = apiPresenter({ baseUrl, links: videoLinks });
  const { userId } = credential;
  const server = new McpServer(
    { name: 'petsing', title: 'petsing: singing pet videos', version: '1.0.0', websiteUrl: `${baseUrl}/docs` },
    {
      instructions:
        'Turns a photo of a pet into a lip-synced singing video. Typical flow: list_templates, then create_video with a ' +
        'template id and a public https photo URL (costs one credit; check get_credits first), then wait_for_video until ' +
        'the status is completed and hand the video_url to the user. To check a photo first (free), call check_photo and ' +
        'create with its image_id; when it finds no face, ask the user where the pet\'s mouth is and pass it as face.mouth. ' +
        'To have the pet say or sing something else, make audio first (make_speech with a voice from list_voices, or ' +
        'extract_soundtrack from a short-video link) and create with its audio_id instead of a template id.',
    },
  );

  /**
   * A failed tool call: a result with isError whose text is the /v1 error body. The detail goes in the text
   * only: the SDK client validates any structuredContent against the success schema, error or not
   * (typescript-sdk issue 1943), and would hide the error behind its own.
   */
  const toolError = (error: unknown): CallToolResult => {
    const appError = toAppError(error);
    if (appError.status >= 500) context.logger.error({ err: error, tool: true }, 'MCP tool failed');
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(errorBody(baseUrl, appError)) }] };
  };

  /** Runs a tool body with its scope check; failures become tool errors carrying the /v1 error body. */
  const run = async <T extends Record<string, unknown>>(scope: Scope, body: () => Promise<T>): Promise<CallToolResult> => {
    try {
      assertScope(credential, scope);
      const result = await body();
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
    } catch (error) {
      return toolError(error);
    }
  };

  const tools = new Map<string, Tool>();
  /** Lists a tool (tools/list shows its schemas) and keeps it for the tools/call handler below. */
  const tool = <Input extends z.ZodRawShape = Record<never, never>>(
    name: string,
    { hints = {}, ...config }: ToolConfig<Input>,
    call: (args: z.infer<z.ZodObject<Input>>, extra: ToolExtra) => Promise<CallToolResult>,
  ) => {
    server.registerTool(name, config, call as ToolCallback<Input>);
    tools.set(name, { input: z.object(config.inputSchema ?? {}), output: z.object(config.outputSchema), hints, call: call as Tool['call'] });
  };
  const countWrite = async () => {
    const policy = rateLimiter.policies.write;
    const decision = await rateLimiter.hit(accountRateSubject(userId), policy);
    if (!decision.allowed) throw rateLimitedError(policy, decision);
  };

  tool(
    'list_templates',
    {
      title: 'List song templates',
      description: 'Lists the songs a pet can sing. Pass a template id, exactly as given, to create_video.',
      outputSchema: ApiTemplateList.shape,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    () => run('videos:read', async () => represent.templateList(await templates.list())),
  );

  tool(
    'create_video',
    {
      title: 'Create a singing pet video',
      description:
        'Starts rendering a video of the pet in the photo singing the template song (template_id) or saying the audio of ' +
        'make_speech or extract_soundtrack (audio_id; the video lasts as long as the audio): exactly one of the two. Costs one credit (fails with ' +
        'insufficient_credits when the balance is 0). The photo is either image_url, a public https URL of a JPEG, PNG, WebP or ' +
        'HEIC image up to 15 MB, or image_id from check_photo (exactly one). face optionally corrects where the pet\'s face is; ' +
        'a photo with no supported pet (an image_id whose check found no face, or an image_url without face) needs face.mouth ' +
        '(else face_not_found, nothing charged). aspect optionally picks the ' +
        'output shape: square (720x720, the default), 4:5 (720x900, for feeds) or 9:16 (720x1280, for stories and reels). Returns at once with ' +
        'status processing; then call wait_for_video with the returned id.',
      inputSchema: CreateApiVideoRequest.shape,
      hints: { face: FACE_HINT, aspect: ASPECT_HINT },
      outputSchema: { ...CreatedApiVideo.shape, next_step: z.string().describe('How to follow the render to its end.') },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    (request) =>
      run('videos:write', async () => {
        await countWrite();
        const created = represent.createdVideo(await videos.createApiVideo(userId, request, 'mcp'));
        return {
          ...created,
          next_step: `Call wait_for_video with video_id ${created.id} (renders take about a minute), or get_video about every 10 seconds until status is completed or failed.`,
        };
      }),
  );

  tool(
    'check_photo',
    {
      title: 'Check a pet photo',
      description:
        'Downloads the photo at image_url (a public https URL of a JPEG, PNG, WebP or HEIC image up to 15 MB), finds the pet\'s face and ' +
        'keeps the photo for 24 hours. Free. Returns an id to pass to create_video as image_id, and face: the landmarks as fractions ' +
        'of the photo\'s width and height with the species (dog, cat, bird, rabbit, hamster, guinea_pig), the view and whether the mouth ' +
        'is open, or null when no supported pet was found (then create_video needs face.mouth, and an image_url create without it ' +
        'is refused with face_not_found before any charge).',
      inputSchema: CheckImageUrlRequest.shape,
      outputSchema: ApiImage.shape,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ image_url }) =>
      run('videos:write', async () => {
        await countWrite();
        return imageRepresentation(await images.checkUrl(userId, image_url));
      }),
  );

  tool(
    'list_voices',
    {
      title: 'List speech voices',
      description: 'Lists the voices make_speech can speak in, each with its language and a sample clip URL to play to the user.',
      outputSchema: ApiVoiceList.shape,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    () => run('videos:read', async () => represent.voiceList(speech.voices())),
  );

  tool(
    'make_speech',
    {
      title: 'Make speech for a video',
      description:
        `Speaks text (at most ${MAX_SPEECH_CHARACTERS} characters, about 30 seconds) in a voice from list_voices and keeps the audio for 24 hours. ` +
        'Free. Returns an id to pass to create_video as audio_id, and the audio\'s length (the video lasts as long).',
      inputSchema: { text: z.string().describe('The words to speak.'), voice_id: z.string().describe('A voice id from list_voices, exactly as given.') },
      outputSchema: ApiAudio.shape,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ text, voice_id }, extra) =>
      run('videos:write', async () => {
        await countWrite();
        return audioRepresentation(await audioRequests.create(userId, { text, voice_id }, extra.signal));
      }),
  );

  tool(
    'extract_soundtrack',
    {
      title: 'Take the sound of a short video',
      description:
        'Takes the soundtrack of a public TikTok video (up to 180 seconds; a video sings its 30 s with the most singing, or from audio_start_seconds) and keeps it for 24 hours. Free. Returns an id to pass to ' +
        'create_video as audio_id, and the audio\'s length (the video lasts as long).',
      inputSchema: { video_url: z.string().max(MAX_URL_LENGTH).describe('The https:// link of a public TikTok video.') },
      outputSchema: ApiAudio.shape,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ video_url }, extra) =>
      run('videos:write', async () => {
        await countWrite();
        return audioRepresentation(await audioRequests.create(userId, { video_url }, extra.signal));
      }),
  );

  tool(
    'get_video',
    {
      title: 'Get a video',
      description: 'Returns one video with its status (pending, processing, completed, failed), progress and, once completed, an expiring video_url.',
      inputSchema: videoIdInput,
      outputSchema: ApiVideo.shape,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ video_id }) => run('videos:read', async () => represent.video(await videos.getOwned(userId, video_id))),
  );

  tool(
    'list_videos',
    {
      title: 'List videos',
      description: 'Lists the account\'s videos, newest first, made through the API or the web app.',
      inputSchema: { limit: z.number().int().min(1).max(100).default(25).describe('How many videos, 1-100 (default 25).') },
      outputSchema: ApiVideoList.shape,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ limit }) => run('videos:read', async () => represent.videoList(await videos.list(userId, { limit }))),
  );

  tool(
    'cancel_video',
    {
      title: 'Cancel a video',
      description:
        'Stops a video that is still rendering: it ends failed with error code canceled and the credit it cost is refunded. ' +
        'A failed video is answered as it is; a completed one cannot be canceled (video_already_completed). Ask the user before calling this.',
      inputSchema: videoIdInput,
      outputSchema: ApiVideo.shape,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ video_id }) =>
      run('videos:write', async () => {
        await countWrite();
        return represent.video(await videos.cancel(userId, video_id));
      }),
  );

  tool(
    'delete_video',
    {
      title: 'Delete a video',
      description: 'Deletes a video and its files permanently. The credit it cost is not refunded. Ask the user before calling this.',
      inputSchema: videoIdInput,
      outputSchema: { id: z.uuid(), deleted: z.literal(true) },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    ({ video_id }) =>
      run('videos:write', async () => {
        await countWrite();
        await videos.delete(userId, video_id);
        return { id: video_id, deleted: true as const };
      }),
  );

  tool(
    'get_credits',
    {
      title: 'Get the credit balance',
      description: 'Returns the credit balance, the cost of one video and the most recent ledger entries (purchases, spends, refunds, grants).',
      outputSchema: ApiCredits.shape,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    () => run('videos:read', async () => represent.credits(await credits.statement(userId))),
  );

  tool(
    'get_account',
    {
      title: 'Get the account',
      description: 'Returns the account behind this credential: user id, credit balance, credits per video and the granted scopes.',
      outputSchema: ApiAccount.shape,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    () => run('videos:read', async () => represent.account(credential, await credits.balance(userId))),
  );

  tool(
    'wait_for_video',
    {
      title: 'Wait for a video to finish',
      description:
        `Waits until the video is completed or failed, at most timeout_seconds (default and longest ${MAX_WAIT_SECONDS}; a larger value is capped), ` +
        'reporting render progress. Returns the video; finished is false if the time ran out, in which case call it again.',
      inputSchema: {
        ...videoIdInput,
        timeout_seconds: z
          .number()
          .int()
          .min(1)
          .max(MAX_TIMEOUT_SECONDS_ACCEPTED)
          .default(MAX_WAIT_SECONDS)
          .describe(`The longest to wait, in seconds; more than ${MAX_WAIT_SECONDS} waits ${MAX_WAIT_SECONDS}.`),
      },
      outputSchema: { ...ApiVideo.shape, finished: z.boolean().describe('True when the status is completed or failed.') },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ video_id, timeout_seconds }, extra) =>
      run('videos:read', async () => {
        // The wait of Prefer: wait on /v1: woken by the database's status notifications, capped at MAX_WAIT_SECONDS.
        const { id } = await videos.getOwned(userId, video_id);
        const progressToken = extra._meta?.progressToken;
        let reported = -1;
        const reportProgress = async (video: Video) => {
          // Progress notifications must increase, so only a higher value is sent.
          if (progressToken === undefined || video.progress <= reported) return;
          reported = video.progress;
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: video.progress, total: 100, message: `Video ${video.status}` },
          });
        };
        const video =
          (await videoWatch.waitForTerminal(userId, id, timeout_seconds * 1000, extra.signal, reportProgress)) ??
          // Deleted meanwhile: not_found, as get_video answers.
          (await videos.getOwned(userId, id));
        return { ...(await represent.video(video)), finished: isTerminal(video.status) };
      }),
  );

  // tools/call is answered here, not by McpServer's own handler, which refuses arguments against the schema
  // before a tool runs and reports that (and an unknown tool) as bare protocol error text. Here both are tool
  // errors with the /v1 error body, as every other tool failure is: invalid_request naming each field, and
  // unknown_tool.
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params;
    const called = tools.get(name);
    if (!called) return toolError(new AppError('unknown_tool', `There is no tool named ${JSON.stringify(name)}.`));
    let input: unknown;
    try {
      input = parseToolArguments(called.input, args ?? {}, called.hints);
    } catch (error) {
      return toolError(error);
    }
    const result = await called.call(input, extra);
    // As McpServer would: structured content that breaks the tool's own output schema is a bug, never sent.
    const output = result.isError ? undefined : called.output.safeParse(result.structuredContent);
    if (output && !output.success) return toolError(new Error(`${name} answered outside its output schema: ${output.error.message}`));
    return result;
  });

  answerInvalidParams(server.server);
  return server;
}
