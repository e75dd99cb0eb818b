import { videoObjectPrefix } from '@petsing/workflows';
import { z } from 'zod';
import type { ObjectStore } from '@petsing/platform/storage';
import type { Logger } from '../logging/logger.ts';
import type { VideoRepository } from '../repositories/video.repository.ts';
import { removeExpiredStems } from '../media/separator/vocal-stems.ts';
import { repeatEvery, type RepeatingTask } from './repeat-every.ts';

/** Video ids looked up per query. */
const ID_BATCH = 500;
const VIDEO_FOLDER = /^videos\/([^/]+)\//;

export type SweepSettings = {
  intervalSeconds: number;
  /** Nothing younger than this is touched: a create stores its files before its row commits, a put writes before it renames. */
  minAgeSeconds: number;
};

type SweepParts = { scratch: boolean; objects: boolean };

export type SweepResult = { scratchFolders: number; abandonedWrites: number; orphanVideoObjects: number; expiredStems: number };

/**
 * Removes what crashed processes leave behind, at start and then periodically: scratch folders (request
 * uploads, speech, soundtrack and audio work folders in this host's temp folder), half-written objects in the object store, and objects under `videos/<id>/`
 * whose video row does not exist (a create that died before its row committed, a delete that died midway); and vocal
 * stems past their retention (they are derived from people's audio).
 */
export class OrphanSweeper {
  constructor(
    private readonly objects: ObjectStore,
    private readonly videos: VideoRepository,
    private readonly removeScratchFolders: (changedBefore: Date) => Promise<number>,
    private readonly settings: SweepSettings,
    private readonly logger: Logger,
  ) {}

  /** A process sweeps this host's scratch folders (`scratch`); a control worker also sweeps the shared object store. */
  start(parts: SweepParts): RepeatingTask {
    return repeatEvery(
      this.settings.intervalSeconds * 1000,
      async () => {
        const result = await this.sweep(parts);
        if (result.scratchFolders + result.abandonedWrites + result.orphanVideoObjects > 0) this.logger.info(result, 'removed files left by crashed processes');
        if (result.expiredStems > 0) this.logger.info({ expiredStems: result.expiredStems }, 'removed vocal stems past their retention');
      },
      (error) => this.logger.error({ err: error }, 'sweeping orphaned files failed'),
    );
  }

  async sweep(parts: SweepParts, now = new Date()): Promise<SweepResult> {
    const cutoff = new Date(now.getTime() - this.settings.minAgeSeconds * 1000);
    return {
      scratchFolders: parts.scratch ? await this.removeScratchFolders(cutoff) : 0,
      abandonedWrites: parts.objects ? await this.objects.removeAbandonedWrites(cutoff) : 0,
      orphanVideoObjects: parts.objects ? await this.removeOrphanVideoObjects(cutoff) : 0,
      expiredStems: parts.objects ? await removeExpiredStems(this.objects, now) : 0,
    };
  }

  /** Objects of video folders with no row whose newest object is older than the cut-off. */
  private async removeOrphanVideoObjects(cutoff: Date): Promise<number> {
    const newest = new Map<string, Date>();
    for await (const object of this.objects.list('videos/')) {
      const id = VIDEO_FOLDER.exec(object.key)?.[1];
      if (!id) continue;
      const seen = newest.get(id);
      if (!seen || object.lastModified > seen) newest.set(id, object.lastModified);
    }
    const candidates = [...newest].filter(([, modified]) => modified < cutoff).map(([id]) => id);
    let removed = 0;
    for (let start = 0; start < candidates.length; start += ID_BATCH) {
      const batch = candidates.slice(start, start + ID_BATCH);
      const existing = await this.videos.existingIds(batch.filter(isUuid));
      for (const id of batch) {
        if (!existing.has(id)) removed += await this.objects.deletePrefix(videoObjectPrefix(id));
      }
    }
    return removed;
  }
}

/** A folder name that is no UUID can have no row (and must not reach the uuid column's query). */
const isUuid = (id: string) => z.uuid().safeParse(id).success;
