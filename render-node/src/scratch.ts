import { removeAbandonedScratch } from '@petsing/platform/tools';
import type { Logger } from './logger.ts';

/** The prefixes of the scratch folders a render node makes in the system's temp folder. */
export const RENDER_SCRATCH = { render: 'petsing-render', detect: 'petsing-detect', preview: 'petsing-preview', heic: 'petsing-heic' } as const;

/**
 * A folder that does not name its process (made by an earlier version) and is unchanged for this long belongs to
 * no running work: longer than a render may run (the render activity's 15-minute start-to-close timeout), so
 * another render node on the same host keeps its folders. A folder that names its process goes once that is gone.
 */
const ABANDONED_AFTER_MS = 30 * 60_000;
const SWEEP_EVERY_MS = 10 * 60_000;

/**
 * Removes the scratch folders of renders and checks that no longer run (a node killed mid-render leaves its
 * folder, partial MP4 included), now and every SWEEP_EVERY_MS until stopped: a render node started again removes
 * what its predecessor left at once (removeAbandonedScratch).
 */
export function startScratchSweep(logger: Logger, root?: string): { stop(): Promise<void> } {
  let round = Promise.resolve();
  const sweep = () => {
    round = removeAbandonedScratch(Object.values(RENDER_SCRATCH), new Date(Date.now() - ABANDONED_AFTER_MS), root).then(
      (removed) => {
        if (removed > 0) logger.info('removed scratch folders of renders that no longer run', { removed });
      },
      (error: unknown) => logger.warn('sweeping scratch folders failed', { error: String(error) }),
    );
  };
  sweep();
  const timer = setInterval(sweep, SWEEP_EVERY_MS);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await round;
    },
  };
}
