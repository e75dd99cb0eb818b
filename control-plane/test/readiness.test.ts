import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlWorker } from '../src/temporal/control-worker.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';

type ReadinessBody = { status: string; checks: { database: { ok: boolean }; temporal: { ok: boolean }; queues: Record<'control' | 'render', { ok: boolean; pollers: number }> } };

const ready = async (service: TestService) => {
  const response = await fetch(`${service.baseUrl}/health/ready`);
  return { status: response.status, body: (await response.json()) as ReadinessBody };
};

describe('GET /health/ready', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ temporal: true });
  });
  afterAll(() => service.stop());

  it('is not ready until a control worker polls, and ready once one does; /health stays the literal OK', async () => {
    const before = await ready(service);
    expect(before.status).toBe(503);
    expect(before.body).toMatchObject({ status: 'not_ready', checks: { database: { ok: true }, temporal: { ok: true }, queues: { control: { ok: false, pollers: 0 }, render: { ok: true, pollers: 0 } } } });
    expect(await (await fetch(`${service.baseUrl}/health`)).text()).toBe('OK');

    const worker = await startControlWorker(service.context);
    try {
      let after = await ready(service);
      for (let tries = 0; after.status !== 200 && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        after = await ready(service);
      }
      expect(after.status).toBe(200);
      expect(after.body.status).toBe('ready');
      expect(after.body.checks.queues.control.pollers).toBeGreaterThan(0);
    } finally {
      await worker.stop();
    }
  });
});

describe('GET /health/ready without Temporal', () => {
  let service: TestService;
  beforeAll(async () => {
    // Nothing listens on port 1: Temporal cannot be reached.
    service = await startTestService({ env: { TEMPORAL_ADDRESS: '127.0.0.1:1' } });
  });
  afterAll(() => service.stop());

  it('answers 503 naming Temporal, with the database fine', async () => {
    const { status, body } = await ready(service);
    expect(status).toBe(503);
    expect(body.checks).toMatchObject({ database: { ok: true }, temporal: { ok: false } });
    expect(JSON.stringify(body)).not.toContain('127.0.0.1');
  });
});
