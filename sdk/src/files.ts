import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';

/** A file to upload: its bytes (Buffer, Uint8Array), a Blob or File, or the path of a local file. */
export type FileInput = Blob | Uint8Array | string;

export type FileOptions = {
  /** Sent as the part's file name; defaults to the path's base name. */
  filename?: string;
  /** Sent as the part's type; defaults to the Blob's type or the path's extension. */
  contentType?: string;
};

// The formats the service accepts for photos (POST /v1/images) and audio (POST /v1/audio).
const TYPES_BY_EXTENSION: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.webp': 'image/webp',
  '.heic': 'image/heic',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.m4a': 'audio/mp4',
  '.mp4': 'audio/mp4',
  '.aac': 'audio/mp4',
  '.webm': 'audio/webm',
};

/** One multipart form with the file under `field`, read whole into memory so a retry can send it again. */
export async function fileForm(field: string, input: FileInput, options: FileOptions, fallbackName: string): Promise<FormData> {
  const path = typeof input === 'string' ? input : undefined;
  const filename = options.filename ?? (path ? basename(path) : input instanceof File ? input.name : fallbackName);
  const blob = path !== undefined ? new Blob([await readFile(path)]) : input instanceof Blob ? input : new Blob([input]);
  const type = options.contentType ?? (blob.type || TYPES_BY_EXTENSION[extname(filename).toLowerCase()] || 'application/octet-stream');
  const form = new FormData();
  form.append(field, new Blob([blob], { type }), filename);
  return form;
}
