import { spawn, type ChildProcess } from 'node:child_process';
import { videoObjectPrefix } from '@petsing/workflows';
import type { Client } from '@temporalio/client';
import sharp from 'sharp';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createControlActivities } from '../control-plane/src/temporal/control-activities.ts';
import { renderWorkflowId } from '@petsing/workflows';
import { PETSING_CLI, serviceProcessEnv, stopProcess, waitFor } from './support/processes.ts';
import { temporal as temporalProto } from '@temporalio/proto';
import { replayFinishedHistories, replayRecordedHistories } from './support/temporal.ts';
import { startTestService, type TestService } from './support/test-service.ts';
import { connectTemporalClient } from '@petsing/platform/runtime';
import { json, type Json } from './support/http.ts';
import { petPhoto } from './support/pet-photo.ts';
import { makeSong, songWav, type Song } from './support/song-mix.ts';
import { seedTemplates } from './support/templates.ts';

/** Small frames keep the suite fast on two cores; the render node's own tests cover full size. */
const RENDER_ENV = { RENDER_OUTPUT_SIZE: '192' };

describe('render orchestration (real Temporal, real workers, real Postgres)', () => {
  let service: TestService;
  let temporal: { client: Client; close(): Promise<void> };
  let userId: string;
  let apiKey: string;
  let petImage: Buffer;
  let renderNode: { stop(): Promise<void> };

  const createVideo = async (image: Buffer = petImage, owner = userId) => {
    const created = await service.context.services.videos.create({
      userId: owner,
      origin: 'api',
      charge: { kind: 'api_credit' },
      watermark: false,
      templateId: 1,
      image: { upload: { body: image, contentType: 'image/png', extension: 'png' } },
    });
    if (!created) throw new Error('not enough credits');
    return created.video;
  };
  const videoRow = (id: string) => service.database.db.selectFrom('videos').selectAll().where('id', '=', id).executeTakeFirst();
  const waitForTerminal = async (id: string, timeoutMs = 120_000) => {
    await waitFor(`video ${id} to finish`, async () => ['completed', 'failed'].includes((await videoRow(id))?.status ?? ''), timeoutMs);
    return (await videoRow(id))!;
  };
  /** An API video of the pet singing `song` (uploaded as WAV), once it is completed or failed. */
  const renderSong = async (song: Song) => {
    const created = await service.context.services.videos.create({
      userId,
      origin: 'api',
      charge: { kind: 'api_credit' },
      watermark: false,
      image: { upload: { body: petImage, contentType: 'image/png', extension: 'png' } },
      audio: { upload: { body: songWav(song), contentType: 'audio/wav', extension: 'wav' } },
    });
    return waitForTerminal(created!.video.id, 150_000);
  };
  const ledger = (videoId: string) =>
    service.database.db.selectFrom('credit_ledger').select(['delta', 'reason']).where('video_id', '=', videoId).orderBy('id').execute();
  const renderActivityStarted = async (videoId: string) => {
    const description = await temporal.client.workflow.getHandle(renderWorkflowId(videoId)).describe();
    return (description.raw.pendingActivities ?? []).find(
      (activity) => activity.activityType?.name === 'renderLipSync' && activity.state === temporalProto.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED,
    );
  };
  const waitForValue = async <T>(what: string, read: () => Promise<T | undefined>, timeoutMs: number): Promise<T> => {
    let value: T | undefined;
    await waitFor(what, async () => (value = await read()) !== undefined, timeoutMs);
    return value!;
  };
  /** The status websocket, signed in with the account's key and ready: every message it receives lands in `events`. */
  const statusSocket = async () => {
    const socket = new WebSocket(`${service.baseUrl.replace('http', 'ws')}/ws`);
    const events: Json[] = [];
    socket.on('message', (data) => events.push(JSON.parse(data.toString())));
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'auth', token: apiKey }));
    await waitFor('websocket ready', async () => events.some((e) => e.type === 'ready'));
    return { socket, events };
  };
  const objectKeys = async (videoId: string) => {
    const prefix = videoObjectPrefix(videoId);
    const keys: string[] = [];
    for (const name of ['audio-prepared.wav', 'audio-delivery.m4a', 'image.png']) if (await service.context.objectStore.exists(`${prefix}${name}`)) keys.push(name);
    const row = await videoRow(videoId);
    if (row?.output_key && (await service.context.objectStore.exists(row.output_key))) keys.push(row.output_key);
    return keys;
  };

  beforeAll(async () => {
    service = await startTestService({ temporal: true, controlWorker: true, env: RENDER_ENV });
    renderNode = await service.startRenderWorker();
    temporal = await connectTemporalClient({ ...service.context.config.env });
    await seedTemplates(service.context);
    userId = (await service.context.services.users.create({ email: 'render@example.com' })).id;
    apiKey = (await service.context.services.apiKeys.create({ userId, scopes: ['videos:read', 'videos:write'] })).key;
    await service.context.services.credits.grant(userId, 100);
    petImage = await petPhoto(512);
  }, 180_000);
  afterAll(async () => {
    await temporal?.close();
    await service?.stop();
  });

  it('create → status events over the websocket → completed with a downloadable MP4', async () => {
    const { socket, events } = await statusSocket();

    const video = await createVideo();
    expect(video.status).toBe('processing');
    await waitFor('completed event', async () => events.some((e) => e.type === 'video.status' && e.id === video.id && e.status === 'completed'), 120_000);
    socket.close();

    const completed = events.find((e) => e.type === 'video.status' && e.status === 'completed');
    expect(completed).toMatchObject({ id: video.id, progress: 100, has_watermark: false, error: null });
    expect(completed.thumbnail_url).toEqual(expect.any(String));
    const progressEvents = events.filter((e) => e.type === 'video.status' && e.status === 'processing').map((e) => e.progress);
    expect(progressEvents.length).toBeGreaterThan(0);
    expect([...progressEvents].sort((a, b) => a - b)).toEqual(progressEvents);

    const download = await fetch(completed.video_url);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('video/mp4');
    const mp4 = Buffer.from(await download.arrayBuffer());
    expect(mp4.subarray(4, 8).toString('ascii')).toBe('ftyp');
    const tampered = await fetch(completed.video_url.replace(/signature=[^&]+/, 'signature=AAAA'));
    expect(tampered.status).toBe(403);
    expect((await json(tampered)).error.code).toBe('download_link_invalid');

    const row = await videoRow(video.id);
    expect(row?.status).toBe('completed');
    // A photo stored without a check has no face the owner was shown: the render found it, and the video says so.
    expect(row).toMatchObject({ photo_check: null, face_source: 'render_no_check', face_model: expect.stringMatching(/^detector-.+\+landmarks-.+$/) });
    expect(await ledger(video.id)).toEqual([{ delta: -1, reason: 'video_create' }]);
  }, 180_000);

  it('shows a video waiting for a render node as queued since a given time, then rendering, in every event and read', async () => {
    const { socket, events } = await statusSocket();
    // No render node polls: the render waits in the queue.
    await renderNode.stop();
    let restarted = false;
    try {
      const video = await createVideo();
      const queued = await waitForValue('the video to be queued', async () => {
        const row = await videoRow(video.id);
        return row?.render_stage === 'queued' ? row : undefined;
      }, 60_000);
      const read = await json(fetch(`${service.baseUrl}/v1/videos/${video.id}`, { headers: { Authorization: `Bearer ${apiKey}` } }));
      expect(read).toMatchObject({ status: 'processing', progress: 0, stage: 'queued', stage_started_at: queued.render_stage_at!.toISOString() });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect((await videoRow(video.id))?.render_stage, 'still queued while no node polls').toBe('queued');

      renderNode = await service.startRenderWorker();
      restarted = true;
      expect((await waitForTerminal(video.id)).status).toBe('completed');
      await waitFor('completed event', async () => events.some((e) => e.type === 'video.status' && e.id === video.id && e.status === 'completed'), 30_000);
      const mine = events.filter((e) => e.type === 'video.status' && e.id === video.id);
      const stages = mine.filter((e) => e.status === 'processing').map((e) => e.stage);
      // Each stage once, in order (preparing may pass before the socket saw it), progress only while rendering.
      expect([...new Set(stages)]).toEqual(stages.filter((stage, i) => stage !== stages[i - 1]));
      expect([...new Set(stages)].filter((stage) => stage !== 'preparing')).toEqual(['queued', 'rendering']);
      expect(mine.filter((e) => e.stage !== 'rendering').every((e) => e.progress === 0 || e.status === 'completed')).toBe(true);
      const rendering = mine.find((e) => e.stage === 'rendering')!;
      const waited = Date.parse(rendering.stage_started_at) - Date.parse(mine.find((e) => e.stage === 'queued')!.stage_started_at);
      expect(waited, 'the queued stage lasted until the node took the render').toBeGreaterThanOrEqual(1500);
      expect(mine.at(-1)).toMatchObject({ status: 'completed', stage: null, stage_started_at: null });
    } finally {
      socket.close();
      if (!restarted) renderNode = await service.startRenderWorker();
    }
  }, 180_000);

  it('never sends one account the events of another', async () => {
    const stranger = (await service.context.services.users.create({ email: 'stranger@example.com' })).id;
    const strangerKey = (await service.context.services.apiKeys.create({ userId: stranger, scopes: ['videos:read'] })).key;
    const socket = new WebSocket(`${service.baseUrl.replace('http', 'ws')}/ws`, { headers: { Authorization: `Bearer ${strangerKey}` } });
    const events: Json[] = [];
    socket.on('message', (data) => events.push(JSON.parse(data.toString())));
    await waitFor('stranger ready', async () => events.some((e) => e.type === 'ready'));
    const video = await createVideo();
    await waitForTerminal(video.id);
    await new Promise((resolve) => setTimeout(resolve, 500));
    socket.close();
    expect(events.filter((e) => e.type === 'video.status')).toEqual([]);
  }, 180_000);

  it('refuses a websocket with a bad credential', async () => {
    const socket = new WebSocket(`${service.baseUrl.replace('http', 'ws')}/ws`);
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'auth', token: 'psk_live_wrong' }));
    const code = await new Promise<number>((resolve) => socket.once('close', (closeCode) => resolve(closeCode)));
    expect(code).toBe(4401);
  });

  it('renders an uploaded song from its stems: the render is handed the vocal and accompaniment stems and answers its sync report', async () => {
    const done = await renderSong(makeSong({ seconds: 5, verses: [[1, 4]] }));
    expect(done.status, done.failure_reason ?? '').toBe('completed');
    const history = await temporal.client.workflow.getHandle(renderWorkflowId(done.id)).fetchHistory();
    const payload = (data: Uint8Array | null | undefined) => JSON.parse(Buffer.from(data!).toString('utf8'));
    const scheduled = history.events!.find((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'renderLipSync');
    const input = payload(scheduled!.activityTaskScheduledEventAttributes!.input!.payloads![0]!.data);
    expect(input.stems).toEqual({ vocalKey: expect.stringMatching(/^stems\/.+\/vocals\.wav$/), accompanimentKey: expect.stringMatching(/^stems\/.+\/accompaniment\.wav$/), origin: 'separated' });
    const completed = history.events!.find((event) => Number(event.activityTaskCompletedEventAttributes?.scheduledEventId) === Number(scheduled!.eventId));
    const result = payload(completed!.activityTaskCompletedEventAttributes!.result!.payloads![0]!.data);
    expect(result.sync).toEqual({ vocalsFound: true, mouthVoiceR: expect.any(Number), instrumentalRestShare: expect.any(Number) });

    // The report is kept on the video with the window of the audio it sang, and shown in its public record.
    const report = { ...result.sync, audioStartSeconds: 0, audioDurationSeconds: expect.closeTo(5, 1) };
    expect(done.sync).toEqual(report);
    const read = await fetch(`${service.baseUrl}/v1/videos/${done.id}`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(read.status).toBe(200);
    expect((await json(read)).sync).toEqual({
      vocals_found: true,
      mouth_voice_r: result.sync.mouthVoiceR,
      instrumental_rest_share: result.sync.instrumentalRestShare,
      audio_start_seconds: 0,
      audio_duration_seconds: done.sync!.audioDurationSeconds,
    });
  }, 180_000);

  it('renders an instrumental with the mouth at rest and says no singing voice was found', async () => {
    const done = await renderSong(makeSong({ seconds: 4, verses: [] }));
    expect(done.status, done.failure_reason ?? '').toBe('completed');
    expect(done.sync).toMatchObject({ vocalsFound: false, mouthVoiceR: null, audioStartSeconds: 0 });
    // Where only the band plays, the mouth rests.
    expect(done.sync!.instrumentalRestShare).toBeGreaterThanOrEqual(0.9);
    const read = await fetch(`${service.baseUrl}/v1/videos/${done.id}`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect((await json(read)).sync).toMatchObject({ vocals_found: false, mouth_voice_r: null });
    expect(await ledger(done.id)).toEqual([{ delta: -1, reason: 'video_create' }]);
  }, 180_000);

  it('fails a photo with no usable face region at once, with a reason, and refunds exactly once', async () => {
    const blank = await sharp({ create: { width: 512, height: 512, channels: 3, background: { r: 128, g: 128, b: 128 } } }).png().toBuffer();
    const before = await service.context.services.credits.balance(userId);
    const video = await createVideo(blank);
    const failed = await waitForTerminal(video.id);
    expect(failed.status).toBe('failed');
    expect(failed.failure_code).toBe('face_not_found');
    expect(failed.failure_reason).toEqual(expect.any(String));
    expect(await ledger(video.id)).toEqual([
      { delta: -1, reason: 'video_create' },
      { delta: 1, reason: 'refund' },
    ]);

    // A retried (or duplicated) failure activity must not refund again.
    const activities = createControlActivities(service.context.services);
    await Promise.all([
      activities.failVideo({ videoId: video.id, code: 'face_not_found', reason: 'retry' }),
      activities.failVideo({ videoId: video.id, code: 'face_not_found', reason: 'retry' }),
    ]);
    expect(await ledger(video.id)).toHaveLength(2);
    expect(await service.context.services.credits.balance(userId)).toBe(before);

    const history = await temporal.client.workflow.getHandle(renderWorkflowId(video.id)).fetchHistory();
    const renderAttempts = history.events!.filter((event) => event.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt);
    expect(Math.max(...renderAttempts.map(Number))).toBe(1);
  }, 180_000);

  /**
   * Starts a render on a render node of its own (a separate process), sends it `signal` mid-render, starts another
   * node, and checks the video completes there, charged once. Answers how the stopped node exited.
   */
  async function renderSurvivesStoppedNode(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    // Only the stopped node (a separate process) serves the GPU queue when the render starts.
    await renderNode.stop();
    const doomed: ChildProcess = spawn(process.execPath, [PETSING_CLI, 'worker', 'render'], { env: serviceProcessEnv(service.env), stdio: 'ignore' });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => doomed.once('exit', (code, exitSignal) => resolve({ code, signal: exitSignal })));
    let restarted = false;
    try {
      const video = await createVideo();
      const firstAttempt = await waitForValue('the render to start on the doomed node', () => renderActivityStarted(video.id), 90_000);
      expect(firstAttempt.lastWorkerIdentity).toContain(`${doomed.pid}@`);
      doomed.kill(signal);
      renderNode = await service.startRenderWorker();
      restarted = true;

      const done = await waitForTerminal(video.id, 120_000);
      expect(done.status).toBe('completed');
      const history = await temporal.client.workflow.getHandle(renderWorkflowId(video.id)).fetchHistory();
      const renderStarts = history.events!.filter((event) => event.activityTaskStartedEventAttributes && history.events!.find(
        (scheduled) => Number(scheduled.eventId) === Number(event.activityTaskStartedEventAttributes!.scheduledEventId),
      )?.activityTaskScheduledEventAttributes?.activityType?.name === 'renderLipSync');
      // Temporal records only the last attempt's start; it is the retry on the other node.
      expect(renderStarts.at(-1)?.activityTaskStartedEventAttributes?.attempt).toBeGreaterThanOrEqual(2);
      expect(await ledger(video.id)).toEqual([{ delta: -1, reason: 'video_create' }]);
      return await exited;
    } finally {
      await stopProcess(doomed);
      if (!restarted) renderNode = await service.startRenderWorker();
    }
  }

  it('finishes the video on another render node when one dies mid-render', async () => {
    expect(await renderSurvivesStoppedNode('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
  }, 240_000);

  it('hands a render back when its render node is stopped with SIGTERM (a scale-in): another node completes it, charged once', async () => {
    // The stopped node exits cleanly on its own rather than being killed.
    expect(await renderSurvivesStoppedNode('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 240_000);

  it('cancels the render of a deleted video, removes its objects and refunds nothing', async () => {
    const before = await service.context.services.credits.balance(userId);
    const refunds = () => service.database.db.selectFrom('credit_ledger').select('id').where('user_id', '=', userId).where('reason', '=', 'refund').execute();
    const refundsBefore = (await refunds()).length;
    const video = await createVideo();
    await waitForValue('the render to start', () => renderActivityStarted(video.id), 60_000);
    await service.context.services.videos.delete(userId, video.id);
    const handle = temporal.client.workflow.getHandle(renderWorkflowId(video.id));
    await waitFor('the workflow to close', async () => (await handle.describe()).status.name !== 'RUNNING', 60_000);
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    expect(await videoRow(video.id)).toBeUndefined();
    await waitFor('objects removed', async () => (await objectKeys(video.id)).length === 0, 30_000);
    expect(await service.context.services.credits.balance(userId)).toBe(before - 1);
    expect((await refunds()).length).toBe(refundsBefore);
  }, 180_000);

  it('brings 20 videos created at once to a terminal state with a balanced ledger', async () => {
    const owner = (await service.context.services.users.create({ email: 'bulk@example.com' })).id;
    await service.context.services.credits.grant(owner, 20);
    const videos = await Promise.all(Array.from({ length: 20 }, () => createVideo(petImage, owner)));
    const finished = await Promise.all(videos.map((video) => waitForTerminal(video.id, 280_000)));
    expect(finished.every((video) => video.status === 'completed')).toBe(true);
    const totals = await sql<{ sum: number; balance: number }>`
      select (select coalesce(sum(delta), 0)::int from credit_ledger where user_id = ${owner}) as sum,
             (select balance from credit_balances where user_id = ${owner}) as balance`.execute(service.database.db);
    expect(totals.rows[0]).toEqual({ sum: 0, balance: 0 });
  }, 300_000);

  it('renders each template\'s preview clip once and serves it', async () => {
    const queued = await service.context.services.templates.schedulePreviews(service.context.services.scheduler);
    expect(queued).toBeGreaterThanOrEqual(5);
    await waitFor('every preview clip', async () => (await service.context.services.templates.list()).every((t) => t.preview_video_key), 240_000);
    expect(await service.context.services.templates.schedulePreviews(service.context.services.scheduler)).toBe(0);
    const templates = await json(fetch(`${service.baseUrl}/templates`));
    const clip = await fetch(templates[0].preview_video_url);
    expect(clip.status).toBe(200);
    expect(clip.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await clip.arrayBuffer()).subarray(4, 8).toString('ascii')).toBe('ftyp');
  }, 300_000);

  it('replays every recorded workflow history against the current workflow code', async () => {
    expect(await replayFinishedHistories(temporal.client, 'renderVideo')).toBeGreaterThanOrEqual(5);
  }, 120_000);

  it('replays the histories recorded by earlier workflow code', async () => {
    // A render cancelled mid-render by the code before patched('await-render-cancellation') (c3586cc's parent, stub
    // activities), whose cleanup ran at once; without the patch check it fails with a nondeterminism error.
    // A completed render with progress signals, and a webhook delivered at its second attempt, both recorded by the
    // code before the workflows parsed inputs and activity results with the contract's schemas (stub activities).
    await replayRecordedHistories([
      'render-video-cancelled-before-await-render-cancellation',
      'render-video-completed-before-contract-parsing',
      'deliver-webhook-retried-before-contract-parsing',
    ]);
  }, 120_000);
});
