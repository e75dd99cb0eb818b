import type { LocalUpload, ReceivedFile } from '../../media/uploads.ts';

/**
 * The media checks of a web create's uploads (sharp and ffmpeg adapters of media/), run after the cheap
 * refusals and before anything is stored or paid.
 */
export type UploadChecks = {
  /** Decodes a photo completely; refuses a truncated, corrupt or oversized one (unsupported_image_format). */
  assertDecodableImage(path: string): Promise<void>;
  /** Measures audio by decoding it and makes it MP3; refuses undecodable audio or audio outside 2 to 30 seconds. */
  normalizeAudio(file: ReceivedFile): Promise<LocalUpload & { durationSeconds: number }>;
};
