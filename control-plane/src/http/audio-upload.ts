import type { Request } from 'express';
import { acceptedContentTypes, AUDIO_UPLOAD as AUDIO_LIMITS } from '@petsing/workflows/api-rules';
import { AppError } from '../errors/app-error.ts';
import type { ReceivedFile } from '../media/uploads.ts';
import { readMultipart, type UploadRule } from './multipart.ts';

/**
 * An `audio` file of POST /create-with-audio and POST /v1/audio, by the limits the web app shows (AUDIO_UPLOAD of
 * api-rules); its length is checked by decoding (media/audio-upload.ts).
 */
export const AUDIO_UPLOAD: UploadRule = {
  sniff: 'media',
  accept: AUDIO_LIMITS.formats,
  maxBytes: AUDIO_LIMITS.maxBytes,
  refusal: { code: 'unsupported_audio_format', formats: AUDIO_LIMITS.formatNames },
};

/** The content types of AUDIO_UPLOAD, as /openapi.json's multipart encoding names them (the web app's file picker offers the same). */
export const AUDIO_CONTENT_TYPES = acceptedContentTypes(AUDIO_LIMITS).join(', ');

/** POST /v1/audio with a file: a form with one `audio` file, handed to `use` and removed afterwards. */
export async function withUploadedAudio<T>(req: Request, use: (audio: ReceivedFile) => Promise<T>): Promise<T> {
  const form = await readMultipart(req, { files: { audio: AUDIO_UPLOAD }, fields: [] });
  try {
    const audio = form.files.audio;
    if (!audio) throw new AppError('invalid_request', 'The form needs an "audio" file.');
    return await use(audio);
  } finally {
    await form.cleanup();
  }
}
