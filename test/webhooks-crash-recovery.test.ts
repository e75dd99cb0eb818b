import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporalClient } from '@petsing/platform/runtime';
import { webhookDeliveryWorkflowId } from '@petsing/workflows';
import { createTestAccount } from './support/accounts.ts';
import type { Json } from './support/http.ts';
import { PETSING_CLI, serviceProcessEnv, stopProcess, waitFor } from './support/processes.ts';
import { startTestService, type TestService } from './support/test-service.ts';
import { startWebhookReceiver, verifyWith } from './support/webhook-receiver.ts';
import { petPhoto } from './support/pet-photo.ts';
import { seedTemplates } from './support/templates.ts';

/**
 * A webhook survives the death of the control worker: real processes, with `petsing worker control` run as a
 * child and SIGKILLed twice, once while the video renders and once while a delivery waits for its retry.
 * The API runs in this process and the render node too; Temporal and Postgres are real. URLs point at
 * 127.0.0.1 under DEV_ALLOW_LOCAL_URLS, the development switch a separate process can be given.
 */
describe('webhook deliveries across control-worker crashes', () => {
  let service: TestService;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let worker: ChildProcess | undefined;

  const startControlWorker = async () => {
    const child = spawn(process.execPath, [PETSING_CLI, 'worker', 'control'], {
      env: serviceProcessEnv({ ...service.env, LOG_LEVEL: 'info' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000)));
    child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000)));
    await waitFor('the control worker to serve its queue', async () => {
      if (child.exitCode !== null) throw new Error(`the control worker exited:\n${output}`);
      return output.includes('"controlWorker":"serving the control task queue"');
    }, 120_000);
    return child;
  };
  const kill = async (child: ChildProcess) => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  const deliveryRows = () => service.database.db.selectFrom('webhook_deliveries').selectAll().orderBy('created_at').execute();

  beforeAll(async () => {
    // The first attempt of video.completed is refused, so the crash can land while its retry waits.
    receiver = await startWebhookReceiver(await petPhoto(256), (_path, _id, seen, body) => (seen === 0 && JSON.parse(body).type === 'video.completed' ? 500 : 200));
    service = await startTestService({
      temporal: true,
      renderWorker: true,
      env: {
        DEV_ALLOW_LOCAL_URLS: 'true',
        ALLOW_HTTP_IMAGE_URLS: 'true',
        RENDER_OUTPUT_SIZE: '192',
        WEBHOOK_RETRY_SCHEDULE_SECONDS: '8,8,8,8,8,8,8,8',
      },
    });
    await seedTemplates(service.context);
  }, 180_000);
  afterAll(async () => {
    await stopProcess(worker);
    await service?.stop();
    await receiver?.close();
  });

  it('gets video.completed exactly once per delivery id although the control worker was SIGKILLed twice', async () => {
    worker = await startControlWorker();
    const account = await createTestAccount(service.context, 'crash-hooks@example.com', 3);
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${service.baseUrl}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${account.readWrite}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Json };
    };
    const endpoint = await post('/v1/webhooks', { url: `http://127.0.0.1:${receiver.port}/hooks/crash` });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    const created = await post('/v1/videos', { template_id: '1', image_url: `http://127.0.0.1:${receiver.port}/pet.png` });
    expect(created.status, JSON.stringify(created.body)).toBe(202);

    // Crash 1: while the video renders, once video.processing is delivered and recorded.
    await waitFor('video.processing delivered', async () => (await deliveryRows()).some((row) => row.event_type === 'video.processing' && row.state === 'delivered'), 120_000);
    await kill(worker);
    worker = await startControlWorker();

    // Crash 2: the first attempt of video.completed answered 500 and is recorded; the retry waits on a Temporal timer.
    await waitFor('the first attempt of video.completed', async () => {
      const completed = (await deliveryRows()).find((row) => row.event_type === 'video.completed');
      return completed !== undefined && completed.attempts >= 1;
    }, 240_000);
    await kill(worker);
    worker = await startControlWorker();

    await waitFor('video.completed delivered', async () => (await deliveryRows()).some((row) => row.event_type === 'video.completed' && row.state === 'delivered'), 120_000);
    // Nothing more can be sent once every delivery's workflow has closed: a duplicate would be in by then.
    const temporal = await connectTemporalClient(service.context.config.env);
    try {
      await waitFor('every delivery workflow to close', async () => {
        for (const row of await deliveryRows()) {
          if ((await temporal.client.workflow.getHandle(webhookDeliveryWorkflowId(row.id)).describe()).status.name === 'RUNNING') return false;
        }
        return true;
      }, 60_000);
    } finally {
      await temporal.close();
    }

    const receptions = receiver.on('/hooks/crash');
    const completed = receptions.filter((reception) => reception.event.type === 'video.completed');
    expect(completed.map((reception) => reception.answered)).toEqual([500, 200]);
    expect(new Set(completed.map((reception) => reception.headers['webhook-id'])).size).toBe(1);
    for (const reception of receptions) verifyWith(endpoint.body.secret, reception);
    // Every delivery id was acknowledged exactly once.
    const acknowledged = receptions.filter((reception) => reception.answered === 200).map((reception) => reception.headers['webhook-id']);
    expect(acknowledged.sort()).toEqual([...new Set(acknowledged)].sort());
    expect(receptions.map((reception) => reception.event.type).filter((type) => type !== 'video.completed')).toEqual(['video.processing']);
    expect(completed[0]!.event.data).toMatchObject({ id: created.body.id, status: 'completed' });
    const rows = await deliveryRows();
    expect(rows.map((row) => [row.event_type, row.state, row.attempts])).toEqual([['video.processing', 'delivered', 1], ['video.completed', 'delivered', 2]]);
  }, 600_000);
});
