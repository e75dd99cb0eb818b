import { DEFAULT_VIDEO_ASPECT, VideoAspect } from '@petsing/workflows';

/** The shapes and their sizes, in the words every surface uses. */
const ASPECT_SIZES = 'square (720×720, the default), 4:5 (720×900) or 9:16 (720×1280)';

/** Named in every refusal of a bad `aspect`, on every surface. */
export const ASPECT_HINT = `aspect is one of ${VideoAspect.options.map((value) => `"${value}"`).join(', ')}: ${ASPECT_SIZES}; leave it out for a square video.`;

/** The output shape of a video, as answered in every video record. */
export const VideoAspectField = VideoAspect.meta({
  id: 'VideoAspect',
  description: `The output video's shape: ${ASPECT_SIZES}. A small photo gives a smaller video of the same shape (at most the photo's own resolution, the part shown never enlarged more than 2×).`,
  example: '9:16',
});

/**
 * The optional `aspect` of every create request; left out, the video is square. Not a reference to
 * VideoAspect, so the MCP tool's input schema carries the values inline.
 */
export const AspectRequestField = VideoAspect.optional().meta({
  description:
    `The output video's shape: ${ASPECT_SIZES}. A small photo gives a smaller video of the same shape (at most the photo's own resolution, the part shown never enlarged more than 2×). `
    + 'Every render of the video (the watermark-removal re-render too) uses it. Optional.',
  default: DEFAULT_VIDEO_ASPECT,
  example: '9:16',
});
