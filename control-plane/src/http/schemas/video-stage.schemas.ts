import { z } from 'zod';

/** Where a processing video's render stands, as answered in every video record (ApiVideo, WebVideo, events). */
export const RenderStageField = z
  .string()
  .nullable()
  .meta({
    id: 'RenderStage',
    description:
      'Where a processing video stands: preparing (its photo and audio are made ready), queued (waiting for a render node: '
      + 'the farm is busy), rendering (a render node is drawing it; progress moves). Null unless status is processing. '
      + 'Extensible: show an unknown value as processing.',
    examples: ['preparing', 'queued', 'rendering'],
  });

/** When the current stage began: now minus this is how long the video has been queued, or rendering. */
export const StageStartedAtField = z.iso.datetime().nullable().meta({
  description: 'When the video entered its current stage (ISO 8601); null when stage is null. While queued, its age is the wait for a render node.',
});
