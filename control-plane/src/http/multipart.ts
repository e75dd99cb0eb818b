import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request } from 'express';
import busboy from 'busboy';
import { megabytes } from '@petsing/workflows/api-rules';
import { AppError, type ErrorCode } from '../errors/app-error.ts';
import { SNIFF_BYTES, sniffContentType, type AcceptKind } from '../media/content-sniffer.ts';
import { createUploadFolder } from '../media/scratch-folders.ts';
import { INVALID_TEXT_MESSAGE, isValidText } from '../services/text.ts';

/** What one file field of a form accepts. */
export type UploadRule = {
  /** How the leading bytes are sniffed; the client's declared content type and file name decide nothing. */
  sniff: AcceptKind;
  /** Every accepted sniffed content type, with the file extension it is stored under. */
  accept: Readonly<Record<string, string>>;
  maxBytes: number;
  /** Answered when the bytes are none of `accept`: the error code and the formats named in its message. */
  refusal: { code: ErrorCode; formats: string };
};

export type FormSpec = {
  files: Readonly<Record<string, UploadRule>>;
  /** Text fields kept; other text fields are ignored (they still count towards MAX_FIELDS). */
  fields: readonly string[];
};

/** A file received in full, lying in the form's private temporary directory. */
type UploadedFile = { field: string; path: string; bytes: number; contentType: string; extension: string };

export type MultipartForm = {
  fields: Partial<Record<string, string>>;
  /** Fields sent as an empty file (a file input left empty in a browser form) are absent. */
  files: Partial<Record<string, UploadedFile>>;
  /** Removes the received files; call it once the request is done with them. */
  cleanup(): Promise<void>;
};

const MAX_FILES = 2;
const MAX_FIELDS = 10;
/** Text fields carry ids and URLs. */
const MAX_FIELD_BYTES = 4096;

/**
 * Reads a multipart/form-data body, streaming each file to a private temporary directory. Limits hold
 * while reading: a file is refused as soon as it passes its size limit or its first bytes are not an
 * accepted format, without reading the rest of the body. On any refusal, malformed body or client abort
 * the received files are removed before the error is thrown.
 */
export async function readMultipart(req: Request, spec: FormSpec): Promise<MultipartForm> {
  if (!req.is('multipart/form-data')) {
    throw new AppError('multipart_required', `Send this request as multipart/form-data, not ${req.get('Content-Type') ?? 'without a Content-Type'}.`);
  }
  const directory = await createUploadFolder();
  const cleanup = () => rm(directory, { recursive: true, force: true });
  const form: MultipartForm = { fields: {}, files: {}, cleanup };
  try {
    await receive(req, spec, directory, form);
    return form;
  } catch (error) {
    await cleanup();
    throw error;
  }
}

function receive(req: Request, spec: FormSpec, directory: string, form: MultipartForm): Promise<void> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: { files: MAX_FILES, fields: MAX_FIELDS, parts: MAX_FILES + MAX_FIELDS, fieldSize: MAX_FIELD_BYTES, fieldNameSize: 100, headerPairs: 20 },
      });
    } catch (error) {
      // busboy refuses a multipart Content-Type without a boundary here.
      reject(new AppError('invalid_request', `Malformed multipart/form-data: ${(error as Error).message}.`));
      return;
    }

    // Stops every file write at once; destroying a file's source stream is not enough, since a source
    // that already handed over its last bytes then counts as finished and its write waits forever.
    const stopWrites = new AbortController();
    const started = new Set<string>();
    const writes: Promise<void>[] = [];
    let failed = false;
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      req.unpipe(parser);
      if (!req.complete) {
        // The rest of the body is not worth reading: discard what arrives until the answer has gone
        // out, then close the connection (the unread rest would otherwise be taken for the next request).
        req.res?.setHeader('Connection', 'close');
        req.resume();
      }
      stopWrites.abort();
      // Reject only once every file write has stopped, so the caller's cleanup removes finished files.
      void Promise.allSettled(writes).then(() => reject(error));
    };
    const refuse = (message: string) => fail(new AppError('invalid_request', message));

    parser.on('file', (name, stream) => {
      if (failed) {
        stream.resume();
        return;
      }
      const rule = Object.hasOwn(spec.files, name) ? spec.files[name] : undefined;
      if (!rule) {
        stream.resume();
        refuse(`Unexpected file field "${name}"; this endpoint accepts files in ${Object.keys(spec.files).map((field) => `"${field}"`).join(' and ')}.`);
        return;
      }
      if (started.has(name)) {
        stream.resume();
        refuse(`Send at most one "${name}" file.`);
        return;
      }
      started.add(name);
      const inspector = new UploadInspector(name, rule);
      const path = join(directory, name);
      const write = pipeline(stream, inspector, createWriteStream(path, { mode: 0o600 }), { signal: stopWrites.signal }).then(
        async () => {
          if (inspector.bytes === 0 || !inspector.contentType) {
            await rm(path, { force: true });
            return;
          }
          const extension = rule.accept[inspector.contentType] ?? 'bin';
          form.files[name] = { field: name, path, bytes: inspector.bytes, contentType: inspector.contentType, extension };
        },
        (error: unknown) => {
          if (error instanceof AppError || (error as NodeJS.ErrnoException).syscall) fail(error);
          // Anything else comes from the source: the form broke off or is malformed.
          else refuse(`The "${name}" file could not be received: ${(error as Error).message}.`);
        },
      );
      writes.push(write);
    });

    parser.on('field', (name, value, info) => {
      if (failed) return;
      if (info.nameTruncated || info.valueTruncated) {
        refuse(`The form field "${name.slice(0, 100)}" is longer than ${MAX_FIELD_BYTES} bytes.`);
        return;
      }
      if (!spec.fields.includes(name)) return;
      if (!isValidText(value)) {
        refuse(`The form field "${name}" ${INVALID_TEXT_MESSAGE}.`);
        return;
      }
      if (form.fields[name] !== undefined) {
        refuse(`Send the form field "${name}" once.`);
        return;
      }
      form.fields[name] = value;
    });

    parser.on('filesLimit', () => refuse(`Too many files: this endpoint accepts at most ${MAX_FILES}.`));
    parser.on('fieldsLimit', () => refuse(`Too many form fields: at most ${MAX_FIELDS} are accepted.`));
    parser.on('partsLimit', () => refuse(`Too many form parts: at most ${MAX_FILES + MAX_FIELDS} are accepted.`));
    parser.on('error', (error) => refuse(`Malformed multipart/form-data: ${(error as Error).message}.`));
    parser.on('close', () => {
      if (failed) return;
      Promise.all(writes).then(() => {
        if (!failed) resolve();
      }, fail);
    });

    const interrupted = () => refuse('The upload was interrupted before it finished.');
    req.on('error', interrupted);
    req.on('close', () => {
      if (!req.complete) interrupted();
    });
    req.pipe(parser);
  });
}

/**
 * Passes a file through while counting it: fails the moment it passes its size limit, and sniffs the
 * first bytes before more than SNIFF_BYTES of an unaccepted format reach the disk.
 */
class UploadInspector extends Transform {
  bytes = 0;
  /** The sniffed content type, once decided. */
  contentType: string | null = null;
  private head: Buffer[] = [];

  constructor(
    private readonly field: string,
    private readonly rule: UploadRule,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.rule.maxBytes) {
      callback(
        new AppError('payload_too_large', `The "${this.field}" file is larger than the ${megabytes(this.rule.maxBytes)} limit.`, {
          hint: `Send a "${this.field}" file of at most ${megabytes(this.rule.maxBytes)}.`,
        }),
      );
      return;
    }
    if (this.contentType === null) {
      this.head.push(chunk);
      if (this.bytes >= SNIFF_BYTES) {
        callback(this.decide());
        return;
      }
      callback();
      return;
    }
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    callback(this.contentType === null && this.bytes > 0 ? this.decide() : null);
  }

  /** Sniffs the buffered head; on success passes it on, on refusal answers the rule's error. */
  private decide(): AppError | null {
    const head = Buffer.concat(this.head);
    this.head = [];
    const sniffed = sniffContentType(head.subarray(0, SNIFF_BYTES), this.rule.sniff);
    if (!sniffed || !Object.hasOwn(this.rule.accept, sniffed)) {
      const found = sniffed ? ` (it is ${sniffed})` : '';
      return new AppError(this.rule.refusal.code, `The "${this.field}" file is not ${this.rule.refusal.formats}${found}.`);
    }
    this.contentType = sniffed;
    this.push(head);
    return null;
  }
}
