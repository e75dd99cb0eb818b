import type { Readable } from 'node:stream';

export interface PutOptions {
  contentType: string;
  /** A body longer than this is rejected; a stream is aborted as soon as it passes the limit. */
  maxBytes?: number;
}

export interface PutResult {
  key: string;
  bytes: number;
}

export interface GetResult {
  body: Readable;
  contentType: string;
  bytes: number;
}

export interface DownloadUrlOptions {
  expiresInSeconds: number;
  /** Makes browsers save the download under this name (Content-Disposition: attachment). */
  fileName?: string;
}

/**
 * Media storage shared by the control plane and the render nodes. Keys are '/'-separated paths
 * (see validateObjectKey); a put either stores the whole body or nothing.
 */
export interface ObjectStore {
  put(key: string, body: Readable | Buffer, options: PutOptions): Promise<PutResult>;
  /** Throws ObjectNotFoundError when there is no object under the key. */
  get(key: string): Promise<GetResult>;
  exists(key: string): Promise<boolean>;
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Removes every object under a folder and returns how many there were. The prefix is a folder:
   * 'videos/1' and 'videos/1/' both mean everything under 'videos/1/', never 'videos/10/...'.
   */
  deletePrefix(prefix: string): Promise<number>;
  downloadUrl(key: string, options: DownloadUrlOptions): Promise<string>;
  /** Every object under a folder (same prefix rule as deletePrefix), in no particular order. */
  list(prefix: string): AsyncIterable<ListedObject>;
  /**
   * Removes what writes that never finished left behind (a crash mid-put) and that began before
   * `startedBefore`; returns how many it removed. Writes in progress are younger than any sensible cut-off.
   */
  removeAbandonedWrites(startedBefore: Date): Promise<number>;
}

export interface ListedObject {
  key: string;
  lastModified: Date;
}

export class ObjectNotFoundError extends Error {
  override readonly name = 'ObjectNotFoundError';
  constructor(readonly key: string) {
    super(`object not found: ${key}`);
  }
}

export class ObjectTooLargeError extends Error {
  override readonly name = 'ObjectTooLargeError';
  constructor(
    readonly key: string,
    readonly maxBytes: number,
  ) {
    super(`object ${key} is larger than the limit of ${maxBytes} bytes`);
  }
}

export class InvalidObjectKeyError extends Error {
  override readonly name = 'InvalidObjectKeyError';
  constructor(
    readonly key: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`invalid object key ${JSON.stringify(key)}: ${reason}`, options);
  }
}

/** S3's limit on a whole key. */
const MAX_KEY_BYTES = 1024;
/** Below the usual 255-byte file name limit, leaving room for the local store's sidecar suffix. */
const MAX_SEGMENT_BYTES = 200;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;
/** A lone UTF-16 surrogate would be stored as U+FFFD, so two different keys could name one object. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Accepts only keys that mean the same object on every store: relative '/'-separated paths
 * without empty, '.' or '..' segments, backslashes or control characters.
 */
export function validateObjectKey(key: string): void {
  const reason = keyProblem(key);
  if (reason !== undefined) throw new InvalidObjectKeyError(key, reason);
}

function keyProblem(key: string): string | undefined {
  if (typeof key !== 'string' || key.length === 0) return 'must be a non-empty string';
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) return `must be at most ${MAX_KEY_BYTES} bytes`;
  if (key.startsWith('/')) return 'must not start with "/"';
  if (key.includes('\\')) return 'must not contain backslashes';
  if (CONTROL_CHARACTER.test(key)) return 'must not contain control characters';
  if (LONE_SURROGATE.test(key)) return 'must be well-formed Unicode';
  for (const segment of key.split('/')) {
    if (segment === '') return 'must not contain empty segments ("//" or a trailing "/")';
    if (segment === '.' || segment === '..') return 'must not contain "." or ".." segments';
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES) return `segments must be at most ${MAX_SEGMENT_BYTES} bytes`;
  }
  return undefined;
}

/** Turns a deletePrefix argument into the folder it names, always ending in '/'. */
export function normalizePrefix(prefix: string): string {
  const folder = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  const reason = keyProblem(folder);
  if (reason !== undefined) throw new InvalidObjectKeyError(prefix, `as a prefix, ${reason}`);
  return `${folder}/`;
}

/** Content types end up in response headers, so only printable ASCII is allowed. */
export function validatePutOptions(options: PutOptions): void {
  if (!/^[\x21-\x7e][\x20-\x7e]*$/.test(options.contentType)) {
    throw new TypeError(`invalid content type ${JSON.stringify(options.contentType)}`);
  }
  if (options.maxBytes !== undefined && !(Number.isSafeInteger(options.maxBytes) && options.maxBytes >= 0)) {
    throw new TypeError(`maxBytes must be a non-negative integer, got ${options.maxBytes}`);
  }
}

export function validateExpiresIn(expiresInSeconds: number, maxSeconds = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isSafeInteger(expiresInSeconds) || expiresInSeconds <= 0 || expiresInSeconds > maxSeconds) {
    throw new RangeError(`expiresInSeconds must be an integer from 1 to ${maxSeconds}, got ${expiresInSeconds}`);
  }
}

/**
 * An attachment Content-Disposition value: a quoted ASCII fallback for old clients plus the exact
 * name in RFC 5987 form, so no file name can break out of the header.
 */
export function attachmentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\]/gu, '_');
  const exact = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}
