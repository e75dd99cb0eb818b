import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';

/** A file on its way to the object store: a stream or buffer with the content type and extension it is stored under. */
export type MediaUpload = { body: Readable | Buffer; contentType: string; extension: string };

/** A received file on local disk (a web upload), stored under `extension` with its sniffed content type. */
export type LocalUpload = { path: string; contentType: string; extension: string };

/** A file of a web create's form, received on local disk, with the form field it came in (named in refusals). */
export type ReceivedFile = LocalUpload & { field: string };

/** Opens the file only once the store reads it, so an upload refused before storing holds no descriptor. */
export function fileUpload(file: LocalUpload): MediaUpload {
  async function* chunks() {
    yield* createReadStream(file.path);
  }
  return { body: Readable.from(chunks(), { objectMode: false }), contentType: file.contentType, extension: file.extension };
}
