import type { Request } from 'express';
import { AppError } from '../errors/app-error.ts';
import type { ReceivedFile } from '../services/video.service.ts';
import { readMultipart, type UploadRule } from './multipart.ts';

const MB = 1024 * 1024;

/** An `audio` file of POST /create-with-audio and POST /v1/audio; its length is checked by decoding (media/audio-upload.ts). */
export const AUDIO_UPLOAD: UploadRule = {
  sniff: 'media',
  accept: { 'audio/mpeg': 'mp3', 'audio/wav': 'wav', 'audio/mp4': 'm4a', 'video/mp4': 'mp4', 'audio/aac': 'aac', 'video/webm': 'webm' },
  maxBytes: 20 * MB,
  refusal: { code: 'unsupported_audio_format', formats: 'MP3, WAV, MP4/AAC or WebM audio' },
};

/** The content types of AUDIO_UPLOAD, as /openapi.json's multipart encoding names them. */
export const AUDIO_CONTENT_TYPES = 'audio/mpeg, audio/wav, audio/mp4, audio/aac, video/mp4, audio/webm, video/webm';

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
