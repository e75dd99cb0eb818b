import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { removeAbandonedScratch } from '@petsing/platform/tools';
import type { Logger } from './logger.ts';

/** The prefixes of the scratch folders a render node makes in the system's temp folder. */
export const RENDER_SCRATCH = { render: 'petsing-render', detect: 'petsing-detect', preview: 'petsing-preview', heic: 'petsing-heic' } as const;

/**
 * The file in a render's scratch folder that says which render it is (its Temporal task token, base64, and its
 * video), so that the node started after one killed mid-render can hand that render back at once
 * (startScratchSweep's `renderLeft`).
 */
export const RENDER_RECORD_FILE = 'render.json';

/** What RENDER_RECORD_FILE holds. */
export interface RenderRecord {
  taskToken: Uint8Array;
  videoId: string;
  workflowId: string;
}

export function renderRecordJson({ taskToken, videoId, workflowId }: RenderRecord): string {
  return JSON.stringify({ taskToken: Buffer.from(taskToken).toString('base64'), videoId, workflowId });
}

/** The record a render left, or undefined where it left none (killed before writing it) or an unreadable one. */
async function readRenderRecord(folder: string): Promise<RenderRecord | undefined> {
  try {
    const { taskToken, videoId, workflowId } = JSON.parse(await readFile(join(folder, RENDER_RECORD_FILE), 'utf8')) as Record<string, unknown>;
    if (typeof taskToken !== 'string' || !taskToken || typeof videoId !== 'string' || typeof workflowId !== 'string') return undefined;
    return { taskToken: new Uint8Array(Buffer.from(taskToken, 'base64')), videoId, workflowId };
  } catch {
    return undefined;
  }
}

/**
 * A folder that does not name its process (made by an earlier version) and is unchanged for this long belongs to
 * no running work: longer than a render may run (the render activity's 15-minute start-to-close timeout), so
 * another render node on the same host keeps its folders. A folder that names its process goes once that is gone.
 */
const ABANDONED_AFTER_MS = 30 * 60_000;
const SWEEP_EVERY_MS = 10 * 60_000;

export interface ScratchSweepOptions {
  /** The temp folder swept (the system's by default). */
  root?: string;
  /** Called with the record of each render whose node died mid-render, found in its folder before it goes. */
  renderLeft?: (render: RenderRecord) => void;
}

/**
 * Removes the scratch folders of renders and checks that no longer run (a node killed mid-render leaves its
 * folder, partial MP4 included), now and every SWEEP_EVERY_MS until stopped: a render node started again removes
 * what its predecessor left at once (removeAbandonedScratch), and passes the record of each render it finds there to
 * `renderLeft`.
 */
export function startScratchSweep(logger: Logger, { root, renderLeft }: ScratchSweepOptions = {}): { stop(): Promise<void> } {
  const readRecord = async (path: string, prefix: string) => {
    if (prefix !== RENDER_SCRATCH.render || !renderLeft) return;
    // A render killed before it wrote its record (or by an earlier version) has none: Temporal's heartbeat timeout retries it.
    const record = await readRenderRecord(path);
    if (record) renderLeft(record);
  };
  let round = Promise.resolve();
  const sweep = () => {
    round = removeAbandonedScratch(Object.values(RENDER_SCRATCH), new Date(Date.now() - ABANDONED_AFTER_MS), root, readRecord).then(
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
