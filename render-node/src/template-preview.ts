import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MouthTrack } from '@petsing/workflows';
import { SAMPLE_PET_FACE } from '@petsing/workflows/media';
import { withScratchDirectory } from '@petsing/platform/tools';
import { RENDER_SCRATCH } from './scratch.ts';
import type { LipSyncModel } from './lipsync-model.ts';
import type { Logger } from './logger.ts';
import { renderVideo, type RenderResult } from './render-pipeline.ts';
import { renderSamplePet } from './sample-pet.ts';

/**
 * A template's preview clip (preview_video_url) and still (preview_image_url): the template's song
 * rendered over the project's own sample pet, without a watermark. Render once per template and store.
 */
export async function renderTemplatePreview(options: {
  model?: LipSyncModel;
  audioPath: string;
  mouthTrack?: MouthTrack;
  outputPath: string;
  thumbnailPath: string;
  width?: number;
  fps?: number;
  logger?: Logger;
  signal?: AbortSignal;
}): Promise<RenderResult> {
  return withScratchDirectory(RENDER_SCRATCH.preview, async (dir) => {
    const imagePath = join(dir, 'sample-pet.png');
    await writeFile(imagePath, await renderSamplePet(1024));
    return await renderVideo({ ...options, imagePath, watermark: false, faceHints: SAMPLE_PET_FACE });
  });
}
