/** Where a template's media lives in the object store. */

export const templateAssets = ['audio', 'preview-image', 'preview-video'] as const;
export type TemplateAsset = (typeof templateAssets)[number];

/**
 * Bumped whenever the songs or the renderer change what a template sounds or looks like: keys of an
 * older version are rebuilt at the next seed and their preview clips rendered again.
 */
export const TEMPLATE_ASSETS_VERSION = 'v3';

export const templateObjectKeys = (id: number) => {
  const base = `templates/${id}/${TEMPLATE_ASSETS_VERSION}`;
  return {
    audio: `${base}/song.mp3`,
    /** The song in stereo (lossless) and its voice alone: what preparation reads. */
    mix: `${base}/song.wav`,
    voice: `${base}/voice.wav`,
    previewImage: `${base}/preview.png`,
    /** The analysis copy (of the voice) and the soundtrack (of the mix), prepared at seeding. */
    preparedAudio: `${base}/song-prepared.wav`,
    deliveryAudio: `${base}/song-delivery.m4a`,
    mouthTrack: `${base}/mouth.json`,
    previewVideo: `${base}/preview.mp4`,
    previewThumbnail: `${base}/preview.jpg`,
  };
};

/** The project's own pet picture (the shared drawing, at its natural size) that sings every template's preview clip. */
export const SAMPLE_PET_KEY = 'templates/sample-pet.png';
