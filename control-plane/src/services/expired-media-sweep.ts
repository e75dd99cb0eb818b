import type { ObjectStore } from '@petsing/platform/storage';
import type { Logger } from '../logging/logger.ts';
import { repeatEvery, type RepeatingTask } from './repeat-every.ts';

/** How often the control worker removes expired held media, and how many of each kind per round. */
const SWEEP_INTERVAL_MS = 3600 * 1000;
const SWEEP_BATCH = 500;

/** Rows of media held for later creates (checked photos, hosted audio), one stored object each, that expire. */
export type ExpiringMediaRows = {
  listExpired(now: Date, limit: number): Promise<{ id: string; object_key: string }[]>;
  delete(ids: string[]): Promise<void>;
};

/** Removes expired media (objects first, so a failure leaves the rows for the next round); returns how many. */
export async function removeExpiredMedia(rows: ExpiringMediaRows, objects: ObjectStore, now: Date): Promise<number> {
  const expired = await rows.listExpired(now, SWEEP_BATCH);
  for (const row of expired) await objects.delete(row.object_key);
  await rows.delete(expired.map((row) => row.id));
  return expired.length;
}

/** Runs every sweep once an hour in the control worker until stopped; logs what went. */
export function startExpiredMediaSweep(sweeps: Record<string, () => Promise<number>>, logger: Logger): RepeatingTask {
  return repeatEvery(
    SWEEP_INTERVAL_MS,
    async () => {
      const removed: Record<string, number> = {};
      for (const [kind, sweep] of Object.entries(sweeps)) removed[kind] = await sweep();
      if (Object.values(removed).some((count) => count > 0)) logger.info({ removed }, 'removed expired held media');
    },
    (error) => logger.error({ err: error }, 'sweeping expired held media failed'),
  );
}
