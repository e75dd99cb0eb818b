import type { HealthRepository } from '../repositories/health.repository.ts';
import type { QueueHealth, QueueName } from './ports/queue-health.ts';

/** How long one readiness check may take before it counts as failed (a probe must answer within its timeout). */
const CHECK_TIMEOUT_MS = 2_000;

/** Only whether each part answered: the endpoint is public (probes send no credentials), so no error text. */
type Check = { ok: boolean };
type QueueCheck = Check & { pollers: number };

export type Readiness = {
  ready: boolean;
  checks: { database: Check; temporal: Check; queues: Record<QueueName, QueueCheck> };
};

/**
 * GET /health/ready: whether this API replica can do its work. Not ready when the database or Temporal cannot
 * be reached, or when no control worker polls (nothing would run a workflow). Render nodes may be scaled to
 * zero while no render waits (KEDA), so their pollers are reported but do not make the API unready.
 */
export class HealthService {
  constructor(
    private readonly database: HealthRepository,
    private readonly queues: QueueHealth,
  ) {}

  async readiness(): Promise<Readiness> {
    const [database, control, render] = await Promise.all([
      check(() => this.database.ping()),
      pollers(() => this.queues.pollers('control')),
      pollers(() => this.queues.pollers('render')),
    ]);
    // Temporal answered if either queue could be described.
    const temporal: Check = { ok: control.ok || render.ok };
    const controlPolled = { ok: control.ok && control.pollers > 0, pollers: control.pollers };
    return {
      ready: database.ok && temporal.ok && controlPolled.ok,
      checks: { database, temporal, queues: { control: controlPolled, render } },
    };
  }
}

async function check(probe: () => Promise<unknown>): Promise<Check> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([probe(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS)))]);
    return { ok: true };
  } catch {
    return { ok: false };
  } finally {
    clearTimeout(timer);
  }
}

async function pollers(count: () => Promise<number>): Promise<QueueCheck> {
  let found = 0;
  const result = await check(async () => {
    found = await count();
  });
  return { ...result, pollers: found };
}
