import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderWorkflowId, templatePreviewWorkflowId, videoObjectPrefix } from '@petsing/workflows';
import { connectTemporalClient } from '@petsing/platform/runtime';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATE_ASSETS_VERSION, templateObjectKeys } from '../control-plane/src/templates/template-objects.ts';
import { RENDER_LOST } from '../control-plane/src/services/video-reconciler.service.ts';
import { createTestAccount, signInWebUser } from './support/accounts.ts';
import { startStallingProxy } from './support/grpc-stalling-proxy.ts';
import { startImageHost } from './support/image-host.ts';
import { freePort, PETSING_CLI, serviceProcessEnv, stopProcess, waitFor } from './support/processes.ts';
import { startTestService, type TestService } from './support/test-service.ts';
import { PET_PHOTO_MOUTH, petPhoto } from './support/pet-photo.ts';
import { seedTemplates } from './support/templates.ts';

const MOUTH = JSON.stringify({ mouth: PET_PHOTO_MOUTH });

/**
 * A paid video must render or be refunded exactly once, whatever process dies. Real processes: the API runs
 * as `petsing api` and is SIGKILLed after its creates committed their charges and before their workflows
 * started; the control worker (with the reconciliation schedule), the render node, Temporal and Postgres are
 * real and stay up.
 */
describe('crash recovery of paid videos', () => {
  let service: TestService;
  let imageHost: Awaited<ReturnType<typeof startImageHost>>;
  let temporal: { client: Client; close(): Promise<void> };
  let api: ChildProcess | undefined;
  let apiTmp: string;
  let previewTemplate: number;

  const videoRows = () => service.database.db.selectFrom('videos').selectAll().orderBy('created_at').execute();
  const ledger = (userId: string) =>
    service.database.db.selectFrom('credit_ledger').select(['delta', 'reason', 'video_id']).where('user_id', '=', userId).orderBy('id').execute();
  const workflowExists = async (videoId: string) => {
    try {
      await temporal.client.workflow.getHandle(renderWorkflowId(videoId)).describe();
      return true;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  };

  /** An API video paid with a credit, created in this process (its render starts at once). */
  const createApiVideo = async (userId: string) =>
    service.context.services.videos.create({
      userId,
      origin: 'api',
      charge: { kind: 'api_credit' },
      watermark: false,
      templateId: 1,
      image: { upload: { body: await petPhoto(256), contentType: 'image/png', extension: 'png' } },
    });

  /** `petsing api` on the test service's database, object store and DATA_DIR, with a temp folder of its own. */
  const startApi = async (env: Record<string, string>) => {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, [PETSING_CLI, 'api'], {
      env: serviceProcessEnv({ ...service.env, PORT: String(port), BASE_URL: baseUrl, TMPDIR: apiTmp, RATE_LIMIT_WRITES_PER_MINUTE: '1000', TEMPLATE_PREVIEWS: 'true', ...env }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = '';
    child.stderr!.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-4000)));
    await waitFor('the API process to answer', async () => (await fetch(`${baseUrl}/health`)).ok, 90_000).catch((error: unknown) => {
      throw new Error(`${String(error)}; its stderr ended with:\n${errors}`);
    });
    return { child, baseUrl };
  };

  beforeAll(async () => {
    imageHost = await startImageHost({ '/pet.png': { body: await petPhoto(256), contentType: 'image/png' } });
    service = await startTestService({
      temporal: true,
      controlWorker: true,
      renderWorker: true,
      userUrlFetcher: imageHost.fetcher,
      env: {
        ALLOW_HTTP_IMAGE_URLS: 'true',
        DEV_ALLOW_LOCAL_URLS: 'true',
        RENDER_OUTPUT_SIZE: '192',
        RECONCILE_INTERVAL_SECONDS: '2',
        RECONCILE_GRACE_SECONDS: '3',
        SWEEP_MIN_AGE_SECONDS: '1',
      },
    });
    await seedTemplates(service.context);
    // Previews are not under test: all but the last are marked rendered, so the one render node stays for
    // the videos. The last one makes the API process connect to Temporal at start, before the proxy stalls.
    const templates = await service.database.db.selectFrom('templates').select('id').orderBy('id').execute();
    previewTemplate = templates.pop()!.id;
    for (const { id } of templates) {
      await service.database.db.updateTable('templates').set({ preview_video_key: templateObjectKeys(id).previewVideo }).where('id', '=', id).execute();
    }
    temporal = await connectTemporalClient(service.context.config.env);
    apiTmp = await mkdtemp(join(tmpdir(), 'petsing-crash-tmp-'));
  }, 180_000);
  afterAll(async () => {
    await stopProcess(api);
    await temporal?.close();
    await service?.stop();
    await imageHost?.close();
    if (apiTmp) await rm(apiTmp, { recursive: true, force: true });
  });

  it('renders every video charged by an API process killed before it started their workflows, charging each once', async () => {
    const proxy = await startStallingProxy(service.env.TEMPORAL_ADDRESS!);
    try {
      const started = await startApi({ TEMPORAL_ADDRESS: proxy.address });
      api = started.child;
      const apiUser = await createTestAccount(service.context, 'crash-api@example.com', 10);
      const webUsers = [];
      for (const name of ['ada', 'bo', 'cy']) webUsers.push(await signInWebUser({ baseUrl: started.baseUrl, env: service.env }, `crash-${name}@example.com`));
      const photo = await petPhoto(256);
      await waitFor('the API to start a preview render through the proxy', async () => {
        await temporal.client.workflow.getHandle(templatePreviewWorkflowId(previewTemplate, TEMPLATE_ASSETS_VERSION)).describe();
        return true;
      }, 60_000);

      // Temporal still answers (each create checks that it does before it charges), but no workflow start arrives.
      proxy.stall('StartWorkflowExecution', 'SignalWithStartWorkflowExecution');
      const webCreate = (token: string) => {
        const form = new FormData();
        form.append('image', new Blob([photo], { type: 'image/png' }), 'pet.png');
        form.append('face', MOUTH);
        form.append('template_id', '1');
        return fetch(`${started.baseUrl}/create-with-template`, { method: 'POST', headers: { Authorization: `Bearer ${token}` }, body: form });
      };
      const apiCreate = () =>
        fetch(`${started.baseUrl}/v1/videos`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${apiUser.readWrite}`, 'Content-Type': 'application/json' },
          // With the mouth given, the photo is not checked before the charge (the check needs Temporal, stalled here).
          body: JSON.stringify({ template_id: '1', image_url: imageHost.url('/pet.png').replace(/\/\/[^:/]+/, '//127.0.0.1'), face: JSON.parse(MOUTH) }),
        });
      // Two free web credits per person a month: six web creates from three people, and three API creates.
      const requests = [...webUsers.flatMap((user) => [webCreate(user.token), webCreate(user.token)]), apiCreate(), apiCreate(), apiCreate()];
      const answers = Promise.allSettled(requests);

      // Every create has committed its video and its charge, and is waiting for Temporal to start its render.
      await waitFor('nine charged videos', async () => (await videoRows()).length === 9, 60_000);
      api.kill('SIGKILL');
      await new Promise((resolve) => api!.once('exit', resolve));
      for (const answer of await answers) expect(answer.status, 'no create was answered before the crash').toBe('rejected');

      const charged = await videoRows();
      expect(charged.map((video) => video.status).sort()).toEqual([...Array(6).fill('pending'), ...Array(3).fill('processing')]);
      for (const video of charged) expect(await workflowExists(video.id), video.id).toBe(false);
      expect((await ledger(apiUser.id)).filter((entry) => entry.reason === 'video_create')).toHaveLength(3);

      // The reconciliation schedule starts each render once the grace period has passed; the render node renders it.
      await waitFor('every video to finish', async () => (await videoRows()).every((video) => ['completed', 'failed'].includes(video.status)), 300_000);
      const settled = await videoRows();
      expect(settled.map((video) => [video.status, video.failure_code])).toEqual(settled.map(() => ['completed', null]));
      for (const video of settled) expect(video.workflow_id).toBe(renderWorkflowId(video.id));

      // Charged once each, refunded never: the API balance is what was granted less the three videos.
      const entries = await ledger(apiUser.id);
      expect(entries.filter((entry) => entry.reason === 'video_create').map((entry) => entry.delta)).toEqual([-1, -1, -1]);
      expect(entries.filter((entry) => entry.reason === 'refund')).toEqual([]);
      expect(await service.context.services.credits.balance(apiUser.id)).toBe(7);
      for (const user of webUsers) {
        const row = await service.database.db.selectFrom('users').select('free_credits').where('id', '=', user.id).executeTakeFirstOrThrow();
        expect(row.free_credits, 'both free credits of the month spent, none given back').toBe(0);
      }
    } finally {
      await proxy.close();
    }
  }, 480_000);

  it('removes the upload folders the killed API left, when an API starts again', async () => {
    // The six web creates were received into upload folders, which the killed process never removed.
    const leftovers = (await readdir(apiTmp)).filter((name) => name.startsWith('petsing-upload-'));
    expect(leftovers.length).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // older than SWEEP_MIN_AGE_SECONDS
    api = (await startApi({})).child;
    await waitFor('the upload folders to be swept', async () => (await readdir(apiTmp)).every((name) => !name.startsWith('petsing-upload-')), 30_000);
    await stopProcess(api);
  }, 120_000);

  it('fails and refunds, once, a paid video whose render workflow was terminated', async () => {
    const owner = await createTestAccount(service.context, 'terminated@example.com', 2);
    const created = await createApiVideo(owner.id);
    const videoId = created!.video.id;
    await temporal.client.workflow.getHandle(renderWorkflowId(videoId)).terminate('an operator stopped it');

    await waitFor('the video to be failed', async () => (await service.context.services.videos.get(owner.id, videoId))?.status === 'failed', 60_000);
    const video = await service.context.services.videos.get(owner.id, videoId);
    expect(video).toMatchObject({ failure_code: RENDER_LOST.code, failure_reason: RENDER_LOST.reason });
    // Later runs of the schedule find it settled and change nothing.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    expect((await ledger(owner.id)).map((entry) => [entry.reason, entry.delta])).toEqual([
      ['grant', 2],
      ['video_create', -1],
      ['refund', 1],
    ]);
    expect(await service.context.services.credits.balance(owner.id)).toBe(2);
  }, 120_000);

  it('sweeps objects of videos that have no row, once they are old enough, and nothing else', async () => {
    const objects = service.context.objectStore;
    const owner = await createTestAccount(service.context, 'sweep@example.com', 1);
    const kept = await createApiVideo(owner.id);
    const orphan = randomUUID();
    await objects.put(`${videoObjectPrefix(orphan)}image.png`, Buffer.from('left by a create that died'), { contentType: 'image/png' });
    await objects.put(`${videoObjectPrefix(orphan)}audio.mp3`, Buffer.from('left by a create that died'), { contentType: 'audio/mpeg' });
    const sweeper = service.context.services.sweeper;

    // Young objects may belong to a create still in progress: left alone.
    expect(await sweeper.sweep({ scratch: false, objects: true }, new Date(Date.now() - 60_000))).toMatchObject({ orphanVideoObjects: 0 });
    expect(await objects.exists(`${videoObjectPrefix(orphan)}image.png`)).toBe(true);

    const later = new Date(Date.now() + 3600_000);
    expect(await sweeper.sweep({ scratch: false, objects: true }, later)).toMatchObject({ orphanVideoObjects: 2 });
    expect(await objects.exists(`${videoObjectPrefix(orphan)}image.png`)).toBe(false);
    expect(await objects.exists(kept!.video.image_key!)).toBe(true);
  }, 120_000);
});
