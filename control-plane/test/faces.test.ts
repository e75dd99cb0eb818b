import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { bundledPetFaceModel, loadRenderWorkerEnv, prepareJob, startRenderWorker } from '@petsing/render-node';
import { temporal as temporalProto } from '@temporalio/proto';
import { renderWorkflowId, type FaceHints, type FoundFace } from '@petsing/workflows';
import { connectTemporalClient } from '@petsing/platform/runtime';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, signInWebUser } from '../../test/support/accounts.ts';
import { sungWav, toneWav } from '../../test/support/audio.ts';
import type { Json } from '../../test/support/http.ts';
import { expectDocumentedResponses, type RecordedResponse } from '../../test/support/openapi.ts';
import { waitFor } from '../../test/support/processes.ts';
import { distance, motionCentre, motionGain, motionMap, type FramePoint } from '../../test/support/video-motion.ts';
import { runOperatorCommand } from '../src/cli/operator-commands.ts';
import { messageFirstLogger } from '../src/logging/logger.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';
import { seedTemplates } from '../../test/support/templates.ts';

/** Real photos of the shared development set, read in place: a frontal cat, and groceries in a car boot (no pet). */
const PETS = join(import.meta.dirname, '..', '..', '..', 'shared', 'pets');
const CAT_PHOTO = join(PETS, 'cat-01.jpg');
const NO_PET_PHOTO = join(PETS, 'other-03.jpg');
const MOUTH = { mouth: { x: 0.4, y: 0.66 } };
const HINTS: FaceHints = { mouth: { x: 0.5, y: 0.7 }, nose: { x: 0.5, y: 0.6 }, chin: { x: 0.5, y: 0.8 }, eyes: [{ x: 0.4, y: 0.45 }, { x: 0.6, y: 0.45 }] };
const DAY_MS = 24 * 3600 * 1000;
/** The renders' frame size (RENDER_OUTPUT_SIZE below): square videos of RENDER_SIZE × RENDER_SIZE. */
const RENDER_SIZE = 192;
/** Short, so the test of a missing render node does not wait long; a real check of these photos takes about a second. */
const DETECTION_TIMEOUT_MS = 15_000;

/**
 * Checking photos before paying and pointing at the pet's face, through the real HTTP API, MCP, the real
 * Temporal dev server, the real control and render workers and real Postgres. Photo URLs point at a plain
 * http server on this machine, which DEV_ALLOW_LOCAL_URLS admits.
 */
describe('photo checks and face hints', () => {
  let service: TestService;
  let renderNode: { stop(): Promise<void> };
  let photoServer: Server;
  let photoBase: string;
  const photos: Record<string, { body: Buffer; type: string }> = {};
  const recorded: RecordedResponse[] = [];

  const call = async (operation: string, method: string, path: string, token: string | undefined, body?: unknown) => {
    const form = body instanceof FormData;
    const response = await fetch(`${service.baseUrl}${path}`, {
      method,
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body && !form ? { 'Content-Type': 'application/json' } : {}) },
      ...(body ? { body: form ? body : JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    const parsed = text ? (JSON.parse(text) as Json) : undefined;
    recorded.push({ operation, status: response.status, body: parsed });
    return { status: response.status, body: parsed as Json, headers: response.headers };
  };
  const photoForm = (name: string, fields: Record<string, string> = {}) => {
    const form = new FormData();
    form.append('image', new Blob([photos[name]!.body], { type: photos[name]!.type }), name);
    for (const [field, value] of Object.entries(fields)) form.append(field, value);
    return form;
  };
  const fieldsForm = (fields: Record<string, string>) => {
    const form = new FormData();
    for (const [field, value] of Object.entries(fields)) form.append(field, value);
    return form;
  };
  const checkByUrl = (key: string, name: string) => call('checkApiImage', 'POST', '/v1/images', key, { image_url: `${photoBase}/${name}` });
  const balance = (userId: string) => service.context.services.credits.balance(userId);
  const videoRow = (id: string) => service.database.db.selectFrom('videos').selectAll().where('id', '=', id).executeTakeFirst();
  const videoCount = async (userId: string) => (await service.database.db.selectFrom('videos').select('id').where('user_id', '=', userId).execute()).length;
  const imageRow = (id: string) => service.database.db.selectFrom('images').selectAll().where('id', '=', id).executeTakeFirst();
  const storedImages = async () => (await readdir(join(service.env.DATA_DIR!, 'object-store', 'objects', 'images')).catch(() => [])).sort();
  const freeCredits = async (token: string) => (await call('getWebAccount', 'GET', '/user/me', token)).body.free_credits as number;

  beforeAll(async () => {
    photos['cat.jpg'] = { body: await readFile(CAT_PHOTO), type: 'image/jpeg' };
    photos['groceries.jpg'] = { body: await readFile(NO_PET_PHOTO), type: 'image/jpeg' };
    photos['cut.jpg'] = { body: photos['cat.jpg'].body.subarray(0, photos['cat.jpg'].body.length / 2), type: 'image/jpeg' };
    photos['grey.png'] = { body: await sharp({ create: { width: 640, height: 480, channels: 3, background: '#808080' } }).png().toBuffer(), type: 'image/png' };
    photos['notes.txt'] = { body: Buffer.from('not a photo\n'.repeat(40)), type: 'text/plain' };
    photoServer = createServer((req, res) => {
      const photo = photos[(req.url ?? '').slice(1)];
      if (!photo) res.writeHead(404).end('not found');
      else res.writeHead(200, { 'Content-Type': photo.type, 'Content-Length': photo.body.length }).end(photo.body);
    });
    await new Promise<void>((resolve) => photoServer.listen(0, '127.0.0.1', resolve));
    photoBase = `http://127.0.0.1:${(photoServer.address() as { port: number }).port}`;

    service = await startTestService({
      temporal: true,
      controlWorker: true,
      // One render slot, the default: photo checks have their own queue and slots and never wait behind a render.
      env: {
        DEV_ALLOW_LOCAL_URLS: 'true', FACE_DETECTION_TIMEOUT_MS: String(DETECTION_TIMEOUT_MS), RENDER_OUTPUT_SIZE: String(RENDER_SIZE),
        RATE_LIMIT_WRITES_PER_MINUTE: '100',
      },
    });
    renderNode = await service.startRenderWorker();
    await seedTemplates(service.context);
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
    await new Promise((resolve) => photoServer?.close(resolve));
  });

  describe('POST /v1/images', () => {
    it('checks a photo by URL: stores it for 24 hours and answers its face as fractions', async () => {
      const owner = await createTestAccount(service.context, 'url-check@example.com', 0);
      const before = Date.now();
      const { status, body } = await checkByUrl(owner.readWrite, 'cat.jpg');
      expect(status, JSON.stringify(body)).toBe(201);
      const { width, height } = await sharp(photos['cat.jpg']!.body).metadata();
      const point = { x: expect.any(Number), y: expect.any(Number) };
      expect(body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        width,
        height,
        face: {
          confidence: expect.any(Number),
          eyes: [point, point],
          nose: point,
          mouth: point,
          mouth_corners: expect.toBeOneOf([null, [point, point]]),
          chin: point,
          head: { left: expect.any(Number), top: expect.any(Number), width: expect.any(Number), height: expect.any(Number) },
          species: 'cat',
          view: expect.toBeOneOf(['frontal', 'three-quarter', 'profile']),
          mouth_open: expect.any(Boolean),
          framing: 'whole-head',
        },
        expires_at: expect.any(String),
      });
      // A frontal cat: the mouth lies inside the head box, below the eyes.
      const { face } = body;
      expect(face.mouth.x).toBeGreaterThan(face.head.left);
      expect(face.mouth.x).toBeLessThan(face.head.left + face.head.width);
      expect(face.mouth.y).toBeGreaterThan(Math.max(face.eyes[0].y, face.eyes[1].y));
      const expires = Date.parse(body.expires_at);
      expect(expires - before).toBeGreaterThanOrEqual(DAY_MS - 1000);
      expect(expires - Date.now()).toBeLessThanOrEqual(DAY_MS);

      const row = await imageRow(body.id);
      expect(row).toMatchObject({ user_id: owner.id, object_key: `images/${body.id}.jpg`, width, height, face: body.face });
      expect(await service.context.objectStore.exists(row!.object_key)).toBe(true);
    });

    it('checks an uploaded photo (multipart) and answers face null when there is no pet', async () => {
      const owner = await createTestAccount(service.context, 'upload-check@example.com', 0);
      const { status, body } = await call('checkApiImage', 'POST', '/v1/images', owner.readWrite, photoForm('grey.png'));
      expect(status, JSON.stringify(body)).toBe(201);
      expect(body).toMatchObject({ width: 640, height: 480, face: null });
      expect(await imageRow(body.id)).toMatchObject({ object_key: `images/${body.id}.png`, face: null });
      // A real photo with no pet in it (groceries in a car boot) is no face either.
      const groceries = await call('checkApiImage', 'POST', '/v1/images', owner.readWrite, photoForm('groceries.jpg'));
      expect([groceries.status, groceries.body.face]).toEqual([201, null]);
    });

    it('refuses what it cannot check with 400 and stable codes, keeping nothing', async () => {
      const owner = await createTestAccount(service.context, 'bad-check@example.com', 0);
      const cases: [string, unknown, string][] = [
        ['no body', undefined, 'invalid_request'],
        ['not a URL', { image_url: 'a cat' }, 'invalid_request'],
        ['metadata address', { image_url: 'http://169.254.169.254/latest/meta-data/' }, 'image_url_refused'],
        ['missing file', { image_url: `${photoBase}/missing.jpg` }, 'image_url_unreachable'],
        ['text file', { image_url: `${photoBase}/notes.txt` }, 'image_url_unsupported_type'],
        ['text upload', photoForm('notes.txt'), 'unsupported_image_format'],
        // The header reads; the render node's decoding of every pixel finds the photo cut off.
        ['truncated upload', photoForm('cut.jpg'), 'unsupported_image_format'],
        ['form without a file', fieldsForm({ note: 'x' }), 'invalid_request'],
      ];
      for (const [what, body, code] of cases) {
        const answer = await call('checkApiImage', 'POST', '/v1/images', owner.readWrite, body);
        expect([answer.status, answer.body.error.code], what).toEqual([400, code]);
        expect(answer.body.error.hint, what).toEqual(expect.any(String));
      }
      expect(await service.database.db.selectFrom('images').select('id').where('user_id', '=', owner.id).execute()).toEqual([]);
      const readOnly = await call('checkApiImage', 'POST', '/v1/images', owner.readOnly, { image_url: `${photoBase}/cat.jpg` });
      expect([readOnly.status, readOnly.body.error.code]).toEqual([403, 'forbidden']);
    });
  });

  describe('POST /v1/videos with image_id and face', () => {
    it('refuses malformed or out-of-range face hints and a wrong photo choice with 400 invalid_request, before charging', async () => {
      const owner = await createTestAccount(service.context, 'bad-face@example.com', 3);
      const imageId = (await checkByUrl(owner.readWrite, 'grey.png')).body.id as string;
      const create = (extra: Record<string, unknown>) => call('createApiVideo', 'POST', '/v1/videos', owner.readWrite, { template_id: '1', image_id: imageId, ...extra });
      const faceCases: [string, unknown, string][] = [
        ['x above 1', { mouth: { x: 1.5, y: 0.5 } }, 'face.mouth.x'],
        ['negative y', { mouth: { x: 0.5, y: -0.1 } }, 'face.mouth.y'],
        ['no mouth', { nose: { x: 0.5, y: 0.5 } }, 'face.mouth'],
        ['text coordinates', { mouth: { x: 'left', y: 0.5 } }, 'face.mouth.x'],
        ['one eye', { mouth: { x: 0.5, y: 0.5 }, eyes: [{ x: 0.4, y: 0.4 }] }, 'face.eyes'],
        ['eye out of range', { mouth: { x: 0.5, y: 0.5 }, eyes: [{ x: 0.4, y: 0.4 }, { x: 2, y: 0.4 }] }, 'face.eyes.1.x'],
        ['not an object', 'mouth at the bottom', 'face'],
      ];
      for (const [what, face, field] of faceCases) {
        const { status, body } = await create({ face });
        expect([status, body.error.code], what).toEqual([400, 'invalid_request']);
        expect(body.error.message, what).toContain(field);
        expect(body.error.hint, what).toContain('fractions from 0 to 1');
      }
      const both = await create({ image_url: `${photoBase}/cat.jpg`, face: MOUTH });
      expect([both.status, both.body.error.code]).toEqual([400, 'invalid_request']);
      const neither = await call('createApiVideo', 'POST', '/v1/videos', owner.readWrite, { template_id: '1', face: MOUTH });
      expect([neither.status, neither.body.error.code]).toEqual([400, 'invalid_request']);
      expect(await balance(owner.id)).toBe(3);
      expect(await videoCount(owner.id)).toBe(0);
    });

    it('refuses a photo without a found face and without face.mouth as face_not_found, with the balance unchanged', async () => {
      const owner = await createTestAccount(service.context, 'no-face@example.com', 2);
      const imageId = (await checkByUrl(owner.readWrite, 'grey.png')).body.id as string;
      const { status, body } = await call('createApiVideo', 'POST', '/v1/videos', owner.readWrite, { template_id: '1', image_id: imageId });
      expect([status, body.error.code]).toEqual([400, 'face_not_found']);
      expect(body.error.hint).toContain('face.mouth');
      expect(await balance(owner.id)).toBe(2);
      expect(await videoCount(owner.id)).toBe(0);
    });

    it('refuses a photo URL with no pet as face_not_found before any charge, naming the checked photo to retry with', async () => {
      const owner = await createTestAccount(service.context, 'url-no-pet@example.com', 2);
      const { status, body } = await call('createApiVideo', 'POST', '/v1/videos', owner.readWrite, { template_id: '1', image_url: `${photoBase}/groceries.jpg` });
      expect([status, body.error.code], JSON.stringify(body)).toEqual([400, 'face_not_found']);
      expect(body.error.image_id).toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
      expect(await balance(owner.id)).toBe(2);
      expect(await videoCount(owner.id)).toBe(0);
      // The photo was kept for a retry that points at the mouth, which the person may insist on.
      expect(await imageRow(body.error.image_id)).toMatchObject({ user_id: owner.id, face: null });
      const pointed = await call('createApiVideo', 'POST', '/v1/videos', owner.readWrite, { template_id: '1', image_id: body.error.image_id, face: MOUTH });
      expect(pointed.status, JSON.stringify(pointed.body)).toBe(202);
      expect(await balance(owner.id)).toBe(1);
      await service.context.services.videos.delete(owner.id, pointed.body.id);
    });

    it('answers unknown_image for another account\'s, an expired or an unknown image id', async () => {
      const owner = await createTestAccount(service.context, 'image-owner@example.com', 1);
      const other = await createTestAccount(service.context, 'image-other@example.com', 1);
      const imageId = (await checkByUrl(owner.readWrite, 'cat.jpg')).body.id as string;
      const create = (key: string, id: string) => call('createApiVideo', 'POST', '/v1/videos', key, { template_id: '1', image_id: id, face: MOUTH });
      expect((await create(other.readWrite, imageId)).body.error.code).toBe('unknown_image');
      expect((await create(owner.readWrite, crypto.randomUUID())).body.error.code).toBe('unknown_image');
      await service.database.db.updateTable('images').set({ created_at: new Date(Date.now() - 2 * DAY_MS), expires_at: new Date(Date.now() - 1000) }).where('id', '=', imageId).execute();
      const expired = await create(owner.readWrite, imageId);
      expect([expired.status, expired.body.error.code]).toEqual([400, 'unknown_image']);
      expect([await balance(owner.id), await balance(other.id)]).toEqual([1, 1]);
    });

    it('creates from an image_id with face hints, stores them, and the render receives them', async () => {
      const owner = await createTestAccount(service.context, 'hinted@example.com', 2);
      const imageId = (await checkByUrl(owner.readWrite, 'grey.png')).body.id as string;
      const { status, body } = await call('createApiVideo', 'POST', '/v1/videos', owner.readWrite, { template_id: '1', image_id: imageId, face: HINTS });
      expect(status, JSON.stringify(body)).toBe(202);
      expect(body.credits_remaining).toBe(1);
      const row = await videoRow(body.id);
      expect(row).toMatchObject({ face_hints: HINTS, image_key: `videos/${body.id}/image.png`, source_image_url: null });
      // The video owns a copy: the checked photo may expire without taking the video's photo along.
      expect(await service.context.objectStore.exists(row!.image_key!)).toBe(true);

      await waitFor('the video to finish', async () => ['completed', 'failed'].includes((await videoRow(body.id))?.status ?? ''), 240_000);
      // Every point given: no face finder was needed, and the record says so.
      expect(await videoRow(body.id)).toMatchObject({ status: 'completed', face_hints: HINTS, face_source: 'given', face_model: null });
      const temporal = await connectTemporalClient(service.context.config.env);
      try {
        const history = await temporal.client.workflow.getHandle(renderWorkflowId(body.id)).fetchHistory();
        const scheduled = (history.events ?? []).map((event) => event.activityTaskScheduledEventAttributes).find((attributes) => attributes?.activityType?.name === 'renderLipSync');
        const input = JSON.parse(Buffer.from(scheduled!.input!.payloads![0]!.data!).toString('utf8'));
        expect(input).toMatchObject({ imageKey: row!.image_key, face: HINTS });
      } finally {
        await temporal.close();
      }
    }, 300_000);
    it('renders the face the photo check stored and showed, not one found again, and records where each face came from', async () => {
      const owner = await createTestAccount(service.context, 'stored-face@example.com', 3);
      const song = new FormData();
      song.append('audio', new Blob([sungWav(3)], { type: 'audio/wav' }), 'sung.wav');
      const audio = await call('createApiAudio', 'POST', '/v1/audio', owner.readWrite, song);
      expect(audio.status, JSON.stringify(audio.body)).toBe(201);
      // Three checks of the same cat whose stored mouths are moved off the found one, to either side: faces the model
      // never finds, so only a render that uses the stored face moves the mouth there. The third is stored as found
      // by another model version, which the render node must not trust.
      const made: Record<'left' | 'right' | 'older', { videoId: string; stored: FoundFace; model: string }> = {} as never;
      for (const [name, dx] of [['left', -0.08], ['right', 0.08], ['older', 0.08]] as const) {
        const checked = await checkByUrl(owner.readWrite, 'cat.jpg');
        const row = (await imageRow(checked.body.id))!;
        expect(row.face_model, 'the check stores its model version').toEqual(expect.stringMatching(/^detector-.+\+landmarks-.+$/));
        const stored: FoundFace = { ...row.face!, mouth: { x: row.face!.mouth.x + dx, y: row.face!.mouth.y } };
        const model = name === 'older' ? 'detector-000000000000+landmarks-000000000000' : row.face_model!;
        await service.database.db.updateTable('images').set({ face: JSON.stringify(stored), face_model: model }).where('id', '=', row.id).execute();
        const created = await call('createApiVideo', 'POST', '/v1/videos', owner.readWrite, { audio_id: audio.body.id, image_id: row.id });
        expect(created.status, JSON.stringify(created.body)).toBe(202);
        expect((await videoRow(created.body.id))!.photo_check).toEqual({ face: stored, model });
        made[name] = { videoId: created.body.id, stored, model };
      }
      const finished = async (id: string) => {
        await waitFor(`video ${id} to finish`, async () => ['completed', 'failed'].includes((await videoRow(id))?.status ?? ''), 240_000);
        return (await videoRow(id))!;
      };
      const version = (await bundledPetFaceModel()).version;
      expect(await finished(made.left.videoId)).toMatchObject({ status: 'completed', face_source: 'photo_check', face_model: version });
      expect(await finished(made.right.videoId)).toMatchObject({ status: 'completed', face_source: 'photo_check', face_model: version });
      // Found again, and the video says why.
      expect(await finished(made.older.videoId)).toMatchObject({ status: 'completed', face_source: 'render_model_changed', face_model: version });
      // Operators see it on the video's record.
      expect(await runOperatorCommand(service.context, 'videos.show', { id: made.left.videoId })).toMatchObject({
        face_source: 'photo_check', face_model: version, photo_check: { face: made.left.stored, model: version },
      });
      // The watermark-removal re-render (after payment) plans with the same stored face.
      const { renders } = service.context.services;
      expect(await renders.beginRerender(made.right.videoId)).toMatchObject({ photoCheck: { face: made.right.stored, model: version } });
      await renders.abandonRerender(made.right.videoId, { code: 'render_failed', reason: 'Not re-rendered by this test.' });

      const scratch = await mkdtemp(join(tmpdir(), 'petsing-stored-face-'));
      try {
        const silence = join(scratch, 'silence.wav');
        await writeFile(silence, toneWav(1));
        /** Where a stored face's mouth lands in the output frame: the render node's own framing of it. */
        const mouthInFrame = async ({ stored, model }: { stored: FoundFace; model: string }): Promise<FramePoint> => {
          const job = await prepareJob({ imagePath: CAT_PHOTO, audioPath: silence, width: RENDER_SIZE, photoCheck: { face: stored, model }, detector: await bundledPetFaceModel() });
          return { x: job.frameFace.mouth[0] / job.frame.width, y: job.frameFace.mouth[1] / job.frame.height };
        };
        const motion = async (videoId: string) => {
          const path = join(scratch, `${videoId}.mp4`);
          await pipeline((await service.context.objectStore.get((await videoRow(videoId))!.output_key!)).body, createWriteStream(path));
          return motionMap(path, RENDER_SIZE, RENDER_SIZE);
        };
        const [leftMouth, rightMouth] = [await mouthInFrame(made.left), await mouthInFrame(made.right)];
        const [left, right] = [await motion(made.left.videoId), await motion(made.right.videoId)];
        // Head sway and blinks are the same in both; what differs is where the mouth opens.
        const onlyLeft = motionCentre(motionGain(left, right));
        const onlyRight = motionCentre(motionGain(right, left));
        const measured = JSON.stringify({ leftMouth, rightMouth, onlyLeft, onlyRight });
        expect(distance(leftMouth, rightMouth), measured).toBeGreaterThan(0.15);
        expect(distance(onlyLeft, leftMouth), measured).toBeLessThan(0.1);
        expect(distance(onlyRight, rightMouth), measured).toBeLessThan(0.1);
        // Each nearer its own stored mouth than the other's (measured: 0.05 against 0.13, 0.08 against 0.22).
        expect(distance(onlyLeft, leftMouth), measured).toBeLessThan(distance(onlyLeft, rightMouth));
        expect(distance(onlyRight, rightMouth), measured).toBeLessThan(distance(onlyRight, leftMouth));
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    }, 300_000);
  });

  describe('web app', () => {
    it('POST /images checks an upload with the ID token and answers the same shape as /v1', async () => {
      const user = await signInWebUser(service, 'web-check@example.com');
      const { status, body, headers } = await call('checkWebImage', 'POST', '/images', user.token, photoForm('cat.jpg'));
      expect(status, JSON.stringify(body)).toBe(201);
      expect(headers.get('cache-control')).toBe('no-store');
      expect(body).toMatchObject({ id: expect.any(String), width: expect.any(Number), height: expect.any(Number), face: { mouth: { x: expect.any(Number), y: expect.any(Number) } }, expires_at: expect.any(String) });
      expect(await imageRow(body.id)).toMatchObject({ user_id: user.id });
      const apiKey = (await createTestAccount(service.context, 'web-check-key@example.com', 0)).readWrite;
      expect((await call('checkWebImage', 'POST', '/images', apiKey, photoForm('cat.jpg'))).status).toBe(401);
    });

    it('checks an upload without face before spending a free credit: no pet is face_not_found, nothing spent', async () => {
      const user = await signInWebUser(service, 'web-no-face@example.com');
      const { status, body } = await call('createWebVideoWithTemplate', 'POST', '/create-with-template', user.token, photoForm('grey.png', { template_id: '1' }));
      expect([status, body.error.code]).toEqual([400, 'face_not_found']);
      expect(body.error.hint).toContain('face.mouth');
      expect(await freeCredits(user.token)).toBe(2);
      expect(await videoCount(user.id)).toBe(0);

      const malformed = await call('createWebVideoWithTemplate', 'POST', '/create-with-template', user.token, photoForm('grey.png', { template_id: '1', face: '{"mouth":{"x":0.5}}' }));
      expect([malformed.status, malformed.body.error.code]).toEqual([400, 'invalid_request']);
      expect(malformed.body.error.message).toContain('mouth.y');
      expect(malformed.body.error.hint).toContain('fractions from 0 to 1');
      const notJson = await call('createWebVideoWithTemplate', 'POST', '/create-with-template', user.token, photoForm('grey.png', { template_id: '1', face: 'mouth=0.5,0.7' }));
      expect([notJson.status, notJson.body.error.code]).toEqual([400, 'invalid_request']);
      expect(await freeCredits(user.token)).toBe(2);
    });

    it('creates from an upload whose check finds a face, and from an image_id with the face field', async () => {
      const user = await signInWebUser(service, 'web-faces@example.com');
      const found = await call('createWebVideoWithTemplate', 'POST', '/create-with-template', user.token, photoForm('cat.jpg', { template_id: '1' }));
      expect(found.status, JSON.stringify(found.body)).toBe(200);
      expect(found.body.free_credits_remaining).toBe(1);
      expect(await videoRow(found.body.id)).toMatchObject({ face_hints: null, image_key: expect.stringMatching(/\/image\.jpg$/) });
      // The renders are not what this test is about: deleting stops them and frees the two cores.
      await service.context.services.videos.delete(user.id, found.body.id);

      const checked = await call('checkWebImage', 'POST', '/images', user.token, photoForm('grey.png'));
      expect(checked.body.face).toBeNull();
      const both = await call('createWebVideoWithTemplate', 'POST', '/create-with-template', user.token, photoForm('grey.png', { template_id: '1', image_id: checked.body.id }));
      expect([both.status, both.body.error.code]).toEqual([400, 'invalid_request']);
      const pointed = await call('createWebVideoWithTemplate', 'POST', '/create-with-template', user.token, fieldsForm({ template_id: '1', image_id: checked.body.id, face: JSON.stringify(MOUTH) }));
      expect(pointed.status, JSON.stringify(pointed.body)).toBe(200);
      expect(pointed.body.free_credits_remaining).toBe(0);
      expect(await videoRow(pointed.body.id)).toMatchObject({ face_hints: MOUTH, image_key: expect.stringMatching(/\/image\.png$/) });
      await service.context.services.videos.delete(user.id, pointed.body.id);
    });
  });

  describe('MCP', () => {
    const connect = async (token: string) => {
      const client = new McpClient({ name: 'petsing-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${service.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      return client;
    };
    const tool = (client: McpClient, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
    const errorCode = (result: CallToolResult) => {
      expect(result.isError).toBe(true);
      return JSON.parse((result.content[0] as { text: string }).text).error.code as string;
    };

    it('check_photo answers the /v1 image; create_video takes image_id and face', async () => {
      const owner = await createTestAccount(service.context, 'mcp-faces@example.com', 2);
      const client = await connect(owner.readWrite);
      try {
        const checked = await tool(client, 'check_photo', { image_url: `${photoBase}/grey.png` });
        expect(checked.isError, JSON.stringify(checked.content)).toBeFalsy();
        expect(checked.structuredContent).toMatchObject({ id: expect.any(String), width: 640, height: 480, face: null, expires_at: expect.any(String) });
        const imageId = (checked.structuredContent as { id: string }).id;

        expect(errorCode(await tool(client, 'create_video', { template_id: '1', image_id: imageId }))).toBe('face_not_found');
        expect(errorCode(await tool(client, 'create_video', { template_id: '1', image_id: imageId, image_url: `${photoBase}/cat.jpg` }))).toBe('invalid_request');
        expect((await tool(client, 'create_video', { template_id: '1', image_id: imageId, face: { mouth: { x: 3, y: 0.5 } } })).isError).toBe(true);
        expect(await balance(owner.id)).toBe(2);

        const created = await tool(client, 'create_video', { template_id: '1', image_id: imageId, face: MOUTH });
        expect(created.isError, JSON.stringify(created.content)).toBeFalsy();
        const id = (created.structuredContent as { id: string }).id;
        expect(await videoRow(id)).toMatchObject({ face_hints: MOUTH });
        expect(await balance(owner.id)).toBe(1);
        await service.context.services.videos.delete(owner.id, id);

        expect(errorCode(await tool(client, 'create_video', { template_id: '1', image_url: `${photoBase}/groceries.jpg` }))).toBe('face_not_found');
        expect(await balance(owner.id)).toBe(1);

        const { tools } = await client.listTools();
        expect(tools.find((entry) => entry.name === 'create_video')!.inputSchema.properties).toHaveProperty('face');
      } finally {
        await client.close();
      }
    });
  });

  it('sweeps expired photos: row and object', async () => {
    const owner = await createTestAccount(service.context, 'sweep@example.com', 0);
    const { body } = await checkByUrl(owner.readWrite, 'grey.png');
    const key = (await imageRow(body.id))!.object_key;
    await service.context.services.images.sweepExpired(new Date(Date.now() + DAY_MS - 60_000));
    expect(await imageRow(body.id)).toBeDefined();
    expect(await service.context.objectStore.exists(key)).toBe(true);
    expect(await service.context.services.images.sweepExpired(new Date(Date.now() + DAY_MS + 1000))).toBeGreaterThanOrEqual(1);
    expect(await imageRow(body.id)).toBeUndefined();
    expect(await service.context.objectStore.exists(key)).toBe(false);
  });

  it('validates every recorded response against /openapi.json', async () => {
    const checked = await expectDocumentedResponses(service.baseUrl, recorded);
    expect([...checked]).toEqual(expect.arrayContaining(['checkApiImage 201', 'checkApiImage 400', 'createApiVideo 202', 'createApiVideo 400', 'checkWebImage 201']));
  });

  it('answers a photo check while the only render slot is taken by a long render', async () => {
    // A node drawing full-size frames of a 29 s song: the render outlasts the check many times over.
    await renderNode.stop();
    const slowNode = await startRenderWorker(loadRenderWorkerEnv({ ...service.env, RENDER_OUTPUT_SIZE: '720' }), messageFirstLogger(service.context.logger));
    const owner = await createTestAccount(service.context, 'busy-node@example.com', 1);
    const temporal = await connectTemporalClient(service.context.config.env);
    try {
      const created = await service.context.services.videos.create({
        userId: owner.id, origin: 'api', charge: { kind: 'api_credit' }, watermark: false, face: HINTS,
        image: { upload: { body: photos['cat.jpg']!.body, contentType: 'image/jpeg', extension: 'jpg' } },
        audio: { upload: { body: toneWav(29), contentType: 'audio/wav', extension: 'wav' } },
      });
      const id = created!.video.id;
      const rendering = async () => {
        const { raw } = await temporal.client.workflow.getHandle(renderWorkflowId(id)).describe();
        return (raw.pendingActivities ?? []).some((activity) => activity.activityType?.name === 'renderLipSync'
          && activity.state === temporalProto.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED);
      };
      await waitFor('the render to be under way', rendering, 180_000);
      const { status, body } = await checkByUrl(owner.readWrite, 'cat.jpg');
      expect(status, JSON.stringify(body)).toBe(201);
      expect(body.face).toMatchObject({ species: 'cat' });
      // Answered while the render still held the node's only render slot.
      expect(await rendering()).toBe(true);
      await service.context.services.videos.delete(owner.id, id);
    } finally {
      await temporal.close();
      await slowNode.stop();
      renderNode = await service.startRenderWorker();
    }
  }, 300_000);

  // Last: it stops the only render node.
  it('answers 503 face_detection_unavailable with Retry-After when no render node checks the photo in time, keeping nothing', async () => {
    await renderNode.stop();
    const owner = await createTestAccount(service.context, 'no-node@example.com', 0);
    const before = await storedImages();
    const started = Date.now();
    const { status, body, headers } = await checkByUrl(owner.readWrite, 'cat.jpg');
    expect([status, body.error.code]).toEqual([503, 'face_detection_unavailable']);
    expect(Number(headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(DETECTION_TIMEOUT_MS - 500);
    expect(await service.database.db.selectFrom('images').select('id').where('user_id', '=', owner.id).execute()).toEqual([]);
    expect(await storedImages()).toEqual(before);
  }, 90_000);
});
