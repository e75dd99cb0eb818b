import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { lstat, mkdir, open, readdir, readFile, rename, rm, rmdir, stat, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { ByteLimit, checkBufferSize } from './byte-limit.ts';
import {
  InvalidObjectKeyError,
  normalizePrefix,
  ObjectNotFoundError,
  validateExpiresIn,
  validateObjectKey,
  validatePutOptions,
  type DownloadUrlOptions,
  type GetResult,
  type ListedObject,
  type ObjectStore,
  type PutOptions,
  type PutResult,
} from './object-store.ts';

export const localObjectStoreOptionsSchema = z.object({
  /** Directory holding everything; created on the first put. */
  root: z.string().min(1),
  /** Origin (and optional path) under which the control plane serves `/files/*`. */
  publicBaseUrl: z.url({ protocol: /^https?$/ }),
  signingSecret: z.string().min(16, 'signingSecret must be at least 16 characters'),
});

export type LocalObjectStoreOptions = z.infer<typeof localObjectStoreOptionsSchema>;

export type DownloadSignatureCheck = 'ok' | 'expired' | 'invalid';

/** The parts of a download URL made by LocalObjectStore.downloadUrl, as the file server receives it. */
export interface DownloadRequest {
  key: string;
  expires: number;
  signature: string;
  /** Not covered by the signature: it only names the saved file (send it via attachmentDisposition). */
  fileName?: string;
}

const FILES_PATH = '/files/';
const DEFAULT_CONTENT_TYPE = 'application/octet-stream';
const metadataSchema = z.object({ contentType: z.string() });

/**
 * Objects on the local filesystem, for development and single-machine installs:
 *   <root>/objects/<key>       the bytes, exactly as put
 *   <root>/meta/<key>.json     { contentType }
 *   <root>/tmp/                writes in progress, renamed into place only once complete and synced
 * A key cannot be both an object and a folder of other keys here ('a' and 'a/b'), unlike S3.
 */
export class LocalObjectStore implements ObjectStore {
  private readonly objectsDir: string;
  private readonly metaDir: string;
  private readonly tmpDir: string;
  private readonly publicBaseUrl: string;
  private readonly signingSecret: string;

  constructor(options: LocalObjectStoreOptions) {
    const parsed = localObjectStoreOptionsSchema.parse(options);
    const root = resolve(parsed.root);
    this.objectsDir = join(root, 'objects');
    this.metaDir = join(root, 'meta');
    this.tmpDir = join(root, 'tmp');
    this.publicBaseUrl = parsed.publicBaseUrl.replace(/\/+$/, '');
    this.signingSecret = parsed.signingSecret;
  }

  async put(key: string, body: Readable | Buffer, options: PutOptions): Promise<PutResult> {
    validateObjectKey(key);
    validatePutOptions(options);
    if (Buffer.isBuffer(body)) checkBufferSize(key, body, options.maxBytes);

    await mkdir(this.tmpDir, { recursive: true });
    const dataTmp = join(this.tmpDir, randomUUID());
    const metaTmp = `${dataTmp}.json`;
    try {
      const bytes = await writeSynced(dataTmp, body, key, options.maxBytes);
      await writeSynced(metaTmp, Buffer.from(JSON.stringify({ contentType: options.contentType })), key, undefined);
      // Metadata first: the data file is what makes the object exist, so a reader never sees a
      // new object without its content type.
      await moveIntoPlace(metaTmp, this.metaPath(key));
      await moveIntoPlace(dataTmp, this.objectPath(key));
      return { key, bytes };
    } catch (error) {
      await Promise.all([rm(dataTmp, { force: true }), rm(metaTmp, { force: true })]);
      if (['EEXIST', 'ENOTDIR', 'EISDIR', 'ENOTEMPTY'].includes(errorCode(error) ?? '')) {
        // The key cannot be an object here, so the metadata already moved into place is stray.
        await this.delete(key);
        throw new InvalidObjectKeyError(key, 'the local object store cannot hold a key that is also a folder of other keys', {
          cause: error,
        });
      }
      throw error;
    }
  }

  async get(key: string): Promise<GetResult> {
    validateObjectKey(key);
    let handle: FileHandle;
    try {
      handle = await open(this.objectPath(key), 'r');
    } catch (error) {
      if (isMissing(error)) throw new ObjectNotFoundError(key);
      throw error;
    }
    try {
      const stats = await handle.stat();
      // Opening a directory succeeds on Linux; a folder of other keys is not an object.
      if (!stats.isFile()) throw new ObjectNotFoundError(key);
      const contentType = await this.readContentType(key);
      return { body: handle.createReadStream(), contentType, bytes: stats.size };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    validateObjectKey(key);
    try {
      return (await stat(this.objectPath(key))).isFile();
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    validateObjectKey(key);
    await removeFile(this.objectPath(key));
    await removeFile(this.metaPath(key));
    await pruneEmptyFolders(dirname(this.objectPath(key)), this.objectsDir);
    await pruneEmptyFolders(dirname(this.metaPath(key)), this.metaDir);
  }

  async deletePrefix(prefix: string): Promise<number> {
    const folder = normalizePrefix(prefix).slice(0, -1);
    const objectFolder = this.objectPath(folder);
    // A file here is the object named exactly like the prefix, which is not under it.
    if (!(await isDirectory(objectFolder))) return 0;
    const count = await countFiles(objectFolder);
    const metaFolder = join(this.metaDir, ...folder.split('/'));
    // An object written under the prefix while it goes (a render finishing as its video is deleted) makes a folder's
    // rmdir fail with ENOTEMPTY: Node retries it, and that object goes too.
    await rm(objectFolder, { recursive: true, force: true, maxRetries: 5 });
    await rm(metaFolder, { recursive: true, force: true, maxRetries: 5 });
    await pruneEmptyFolders(dirname(objectFolder), this.objectsDir);
    await pruneEmptyFolders(dirname(metaFolder), this.metaDir);
    return count;
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    const folder = normalizePrefix(prefix).slice(0, -1);
    if (!(await isDirectory(this.objectPath(folder)))) return;
    for await (const path of walkFiles(this.objectPath(folder))) {
      const stats = await stat(path).catch((error: unknown) => {
        if (isMissing(error)) return undefined; // deleted while listing
        throw error;
      });
      if (stats) yield { key: relative(this.objectsDir, path).split(sep).join('/'), lastModified: stats.mtime };
    }
  }

  /** Files of puts that never reached their rename: a crash mid-write leaves them in tmp/. */
  async removeAbandonedWrites(startedBefore: Date): Promise<number> {
    let removed = 0;
    const entries = await readdir(this.tmpDir).catch((error: unknown) => {
      if (isMissing(error)) return [];
      throw error;
    });
    for (const name of entries) {
      const path = join(this.tmpDir, name);
      const stats = await lstat(path).catch(() => undefined);
      if (!stats || stats.mtime >= startedBefore) continue;
      await rm(path, { recursive: true, force: true });
      removed++;
    }
    return removed;
  }

  /** A URL the control plane's `/files/*` route serves after verifyDownloadSignature says 'ok'. */
  async downloadUrl(key: string, options: DownloadUrlOptions): Promise<string> {
    validateObjectKey(key);
    validateExpiresIn(options.expiresInSeconds);
    const expires = Math.floor(Date.now() / 1000) + options.expiresInSeconds;
    const path = key.split('/').map(encodeURIComponent).join('/');
    const fileName = options.fileName === undefined ? '' : `&filename=${encodeURIComponent(options.fileName)}`;
    return `${this.publicBaseUrl}${FILES_PATH}${path}?expires=${expires}&signature=${this.sign(key, expires)}${fileName}`;
  }

  /** Checks the signature before the expiry, so a forged URL is 'invalid' whatever its expiry. */
  verifyDownloadSignature(key: string, expires: number, signature: string): DownloadSignatureCheck {
    if (!Number.isSafeInteger(expires) || expires < 0) return 'invalid';
    const expected = Buffer.from(this.sign(key, expires));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return Date.now() >= expires * 1000 ? 'expired' : 'ok';
  }

  /** Expires is all digits and keys cannot contain a newline, so the signed text is unambiguous. */
  private sign(key: string, expires: number): string {
    return createHmac('sha256', this.signingSecret).update(`${expires}\n${key}`).digest('base64url');
  }

  private objectPath(key: string): string {
    return join(this.objectsDir, ...key.split('/'));
  }

  private metaPath(key: string): string {
    return `${join(this.metaDir, ...key.split('/'))}.json`;
  }

  private async readContentType(key: string): Promise<string> {
    try {
      return metadataSchema.parse(JSON.parse(await readFile(this.metaPath(key), 'utf8'))).contentType;
    } catch (error) {
      if (isMissing(error)) return DEFAULT_CONTENT_TYPE;
      throw error;
    }
  }
}

/**
 * Splits a request target such as `/files/videos/1/out.mp4?expires=…&signature=…` (the path as the
 * file server sees it, without publicBaseUrl's own path) into its parts; null when it is not one.
 */
export function parseDownloadPath(pathAndQuery: string): DownloadRequest | null {
  const queryStart = pathAndQuery.indexOf('?');
  const path = queryStart === -1 ? pathAndQuery : pathAndQuery.slice(0, queryStart);
  if (!path.startsWith(FILES_PATH) || queryStart === -1) return null;
  const query = new URLSearchParams(pathAndQuery.slice(queryStart + 1));
  const expires = query.get('expires');
  const signature = query.get('signature');
  if (expires === null || !/^\d{1,15}$/.test(expires) || !signature) return null;
  let key: string;
  try {
    key = path.slice(FILES_PATH.length).split('/').map(decodeURIComponent).join('/');
    validateObjectKey(key);
  } catch {
    return null;
  }
  const fileName = query.get('filename');
  return { key, expires: Number(expires), signature, ...(fileName !== null && { fileName }) };
}

/** Writes a complete file and flushes it to disk, so a later rename publishes finished bytes only. */
async function writeSynced(path: string, body: Readable | Buffer, key: string, maxBytes: number | undefined): Promise<number> {
  if (Buffer.isBuffer(body)) {
    await writeFile(path, body, { flag: 'wx', flush: true });
    return body.length;
  }
  // Opened before streaming so the file exists by the time a failure is cleaned up; the stream
  // closes the handle (after fsync, via flush) whether it finishes or fails.
  const handle = await open(path, 'wx');
  const limit = new ByteLimit(key, maxBytes);
  await pipeline(body, limit, handle.createWriteStream({ flush: true }));
  return limit.bytes;
}

async function moveIntoPlace(from: string, to: string): Promise<void> {
  const folder = dirname(to);
  // A concurrent delete may prune the freshly made folder before the rename; make it again.
  for (let attempt = 1; ; attempt++) {
    await mkdir(folder, { recursive: true });
    try {
      await rename(from, to);
      break;
    } catch (error) {
      if (errorCode(error) !== 'ENOENT' || attempt === 3) throw error;
    }
  }
  // The rename itself is only durable once the folder's entry list is.
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function removeFile(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    // EISDIR: the key names a folder of other keys, which is not an object to delete.
    if (!isMissing(error) && errorCode(error) !== 'EISDIR') throw error;
  }
}

/** Removes folders left empty by deletes, up to (not including) the store's top folder. */
async function pruneEmptyFolders(folder: string, top: string): Promise<void> {
  for (let current = folder; current.startsWith(`${top}${sep}`); current = dirname(current)) {
    try {
      await rmdir(current);
    } catch (error) {
      if (['ENOTEMPTY', 'EEXIST', 'ENOENT', 'ENOTDIR'].includes(errorCode(error) ?? '')) return;
      throw error;
    }
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isDirectory();
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
}

async function* walkFiles(folder: string): AsyncIterable<string> {
  const entries = await readdir(folder, { withFileTypes: true }).catch((error: unknown) => {
    if (isMissing(error)) return []; // deleted while listing
    throw error;
  });
  for (const entry of entries) {
    if (entry.isDirectory()) yield* walkFiles(join(folder, entry.name));
    else if (entry.isFile()) yield join(folder, entry.name);
  }
}

async function countFiles(folder: string): Promise<number> {
  let count = 0;
  for await (const _ of walkFiles(folder)) count++;
  return count;
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}
