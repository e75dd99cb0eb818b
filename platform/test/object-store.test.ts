import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { CreateMultipartUploadCommand, ListMultipartUploadsCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import {
  createObjectStore,
  InvalidObjectKeyError,
  LocalObjectStore,
  ObjectNotFoundError,
  ObjectTooLargeError,
  parseDownloadPath,
  S3ObjectStore,
  type ObjectStore,
} from '../src/storage/index.ts';
import { startSignedFileServer } from './support/signed-file-server.ts';

const MiB = 1024 * 1024;

interface Harness {
  store: ObjectStore;
  /** What a failed put could leave behind: temp files, unfinished multipart uploads. */
  leftovers(): Promise<string[]>;
  /** Leaves a write unfinished, as a process killed mid-put would. */
  abandonWrite(key: string): Promise<void>;
  close(): Promise<void>;
}

const s3Credentials = { region: 'us-east-1', accessKeyId: 'test', secretAccessKey: 'test', forcePathStyle: true } as const;
const bucket = `object-store-test-${randomUUID().slice(0, 8)}`;

async function openS3(): Promise<Harness> {
  const endpoint = inject('s3Endpoint');
  const store = createObjectStore({ kind: 's3', endpoint, bucket, ...s3Credentials });
  await store.ensureBucket();
  const inspector = new S3Client({ endpoint, ...s3Credentials, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  return {
    store,
    leftovers: async () => {
      const { Uploads = [] } = await inspector.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
      return Uploads.map((upload) => `multipart upload of ${upload.Key}`);
    },
    abandonWrite: async (key) => {
      const { UploadId } = await inspector.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
      await inspector.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: 1, Body: Buffer.alloc(1024, 7) }));
    },
    close: async () => inspector.destroy(),
  };
}

async function openLocal(): Promise<Harness> {
  const root = await mkdtemp(join(tmpdir(), 'local-object-store-'));
  const files = await startSignedFileServer(() => store);
  const store = createObjectStore({ kind: 'local', root, publicBaseUrl: files.baseUrl, signingSecret: 'test-signing-secret-0123456789' });
  return {
    store,
    leftovers: async () => readdir(join(root, 'tmp')).catch(() => []),
    abandonWrite: async () => {
      await mkdir(join(root, 'tmp'), { recursive: true });
      await writeFile(join(root, 'tmp', randomUUID()), Buffer.alloc(1024, 7));
    },
    close: async () => {
      files.server.closeAllConnections();
      files.server.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Yields `data` in `chunkSize` pieces and records how much of it was actually read. */
function chunked(data: Buffer, chunkSize = 64 * 1024): Readable & { bytesRead: () => number } {
  let read = 0;
  const stream = Readable.from(
    (function* () {
      for (let offset = 0; offset < data.length; offset += chunkSize) {
        const chunk = data.subarray(offset, offset + chunkSize);
        read += chunk.length;
        yield chunk;
      }
    })(),
    { objectMode: false },
  );
  return Object.assign(stream, { bytesRead: () => read });
}

function failingAfter(data: Buffer, error: Error): Readable {
  return Readable.from(
    (async function* () {
      yield data;
      await new Promise((resolve) => setTimeout(resolve, 10));
      throw error;
    })(),
    { objectMode: false },
  );
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe.each([
  { name: 'S3 (SeaweedFS)', open: openS3 },
  { name: 'local filesystem', open: openLocal },
])('$name object store', ({ open }) => {
  let harness: Harness;
  let store: ObjectStore;
  /** A fresh folder per test, so tests cannot see each other's objects. */
  let base: string;

  beforeAll(async () => {
    harness = await open();
    store = harness.store;
  });
  afterAll(async () => harness?.close());
  afterEach(async () => {
    expect(await harness.leftovers()).toEqual([]);
  });
  const folder = () => (base = `t/${randomUUID()}`);

  it('round-trips a Buffer with its content type', async () => {
    const key = `${folder()}/photo.jpg`;
    const data = randomBytes(1000);
    expect(await store.put(key, data, { contentType: 'image/jpeg' })).toEqual({ key, bytes: 1000 });
    const object = await store.get(key);
    expect(object.contentType).toBe('image/jpeg');
    expect(object.bytes).toBe(1000);
    expect(await buffer(object.body)).toEqual(data);
  });

  it('round-trips a stream of many chunks', async () => {
    const key = `${folder()}/audio.wav`;
    const data = randomBytes(300 * 1024);
    expect(await store.put(key, chunked(data, 1000), { contentType: 'audio/wav' })).toEqual({ key, bytes: data.length });
    const object = await store.get(key);
    expect(object.contentType).toBe('audio/wav');
    expect(object.bytes).toBe(data.length);
    expect(await buffer(object.body)).toEqual(data);
  });

  it('streams a body bigger than one multipart part', async () => {
    const key = `${folder()}/video.mp4`;
    const data = randomBytes(7 * MiB);
    expect(await store.put(key, chunked(data), { contentType: 'video/mp4', maxBytes: 8 * MiB })).toEqual({
      key,
      bytes: data.length,
    });
    const object = await store.get(key);
    expect(object.bytes).toBe(data.length);
    expect(sha256(await buffer(object.body))).toBe(sha256(data));
  });

  it('stores an empty stream', async () => {
    const key = `${folder()}/empty`;
    expect(await store.put(key, chunked(Buffer.alloc(0)), { contentType: 'text/plain' })).toEqual({ key, bytes: 0 });
    const object = await store.get(key);
    expect(object.bytes).toBe(0);
    expect(await buffer(object.body)).toHaveLength(0);
  });

  it('replaces an object put again under the same key, content type included', async () => {
    const key = `${folder()}/out`;
    await store.put(key, Buffer.from('first'), { contentType: 'text/plain' });
    await store.put(key, Buffer.from('{"second":true}'), { contentType: 'application/json' });
    const object = await store.get(key);
    expect(object.contentType).toBe('application/json');
    expect((await buffer(object.body)).toString()).toBe('{"second":true}');
  });

  it('exists is true only for stored objects, not for missing keys or folders', async () => {
    const key = `${folder()}/sub/a.txt`;
    expect(await store.exists(key)).toBe(false);
    await store.put(key, Buffer.from('a'), { contentType: 'text/plain' });
    expect(await store.exists(key)).toBe(true);
    expect(await store.exists(`${base}/sub`)).toBe(false);
    await store.delete(key);
    expect(await store.exists(key)).toBe(false);
  });

  it('delete is idempotent', async () => {
    const key = `${folder()}/a.txt`;
    await store.put(key, Buffer.from('a'), { contentType: 'text/plain' });
    await store.delete(key);
    await expect(store.delete(key)).resolves.toBeUndefined();
    await expect(store.delete(`${base}/never-existed`)).resolves.toBeUndefined();
    await expect(store.get(key)).rejects.toBeInstanceOf(ObjectNotFoundError);
  });

  it('deletePrefix removes everything under the folder and nothing beside it', async () => {
    folder();
    const inside = [`${base}/v1/a`, `${base}/v1/b/c`, `${base}/v1/b/d`];
    const outside = [`${base}/v10/a`, `${base}/v1x`, `${base}/other/v1/a`];
    for (const key of [...inside, ...outside]) await store.put(key, Buffer.from(key), { contentType: 'text/plain' });

    expect(await store.deletePrefix(`${base}/v1/`)).toBe(3);
    for (const key of inside) expect(await store.exists(key)).toBe(false);
    for (const key of outside) expect(await store.exists(key)).toBe(true);
    expect(await store.deletePrefix(`${base}/v1/`)).toBe(0);
  });

  it('deletePrefix treats a prefix without a trailing slash as a folder', async () => {
    folder();
    await store.put(`${base}/v1/a`, Buffer.from('a'), { contentType: 'text/plain' });
    await store.put(`${base}/v10/a`, Buffer.from('a'), { contentType: 'text/plain' });
    expect(await store.deletePrefix(`${base}/v1`)).toBe(1);
    expect(await store.exists(`${base}/v1/a`)).toBe(false);
    expect(await store.exists(`${base}/v10/a`)).toBe(true);
  });

  it('deletePrefix removes more objects than one listing page holds', async () => {
    folder();
    const keys = Array.from({ length: 1005 }, (_, i) => `${base}/many/${String(i).padStart(4, '0')}`);
    for (let i = 0; i < keys.length; i += 50) {
      await Promise.all(keys.slice(i, i + 50).map((key) => store.put(key, Buffer.from('x'), { contentType: 'text/plain' })));
    }
    expect(await store.deletePrefix(`${base}/many/`)).toBe(1005);
    expect(await store.exists(keys[0]!)).toBe(false);
    expect(await store.exists(keys[1004]!)).toBe(false);
  });

  it('list yields every object under the folder with its modification time, and nothing beside it', async () => {
    const root = folder();
    const before = Date.now() - 5000;
    const keys = [`${root}/a.txt`, `${root}/b/c.txt`, `${root}/b/d/e.txt`];
    for (const key of keys) await store.put(key, Buffer.from(key), { contentType: 'text/plain' });
    await store.put(`${root}-sibling/x.txt`, Buffer.from('x'), { contentType: 'text/plain' });
    const listed = [];
    for await (const object of store.list(root)) listed.push(object);
    expect(listed.map((object) => object.key).sort()).toEqual(keys);
    for (const object of listed) expect(object.lastModified.getTime()).toBeGreaterThan(before);
    const missing = [];
    for await (const object of store.list(`${root}/none`)) missing.push(object);
    expect(missing).toEqual([]);
    await store.deletePrefix(`${root}-sibling`);
  });

  it('removeAbandonedWrites removes unfinished writes begun before the cut-off, and only those', async () => {
    const key = `${folder()}/abandoned.bin`;
    await harness.abandonWrite(key);
    expect(await harness.leftovers()).toHaveLength(1);
    // A write that began after the cut-off may still be in progress.
    expect(await store.removeAbandonedWrites(new Date(Date.now() - 3600_000))).toBe(0);
    expect(await harness.leftovers()).toHaveLength(1);
    expect(await store.removeAbandonedWrites(new Date(Date.now() + 60_000))).toBe(1);
    expect(await store.exists(key)).toBe(false);
  });

  it('get of a missing key throws ObjectNotFoundError', async () => {
    const key = `${folder()}/missing.mp4`;
    const error = await store.get(key).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ObjectNotFoundError);
    expect((error as ObjectNotFoundError).key).toBe(key);
  });

  it('get of a folder of other keys throws ObjectNotFoundError', async () => {
    await store.put(`${folder()}/dir/a`, Buffer.from('a'), { contentType: 'text/plain' });
    await expect(store.get(`${base}/dir`)).rejects.toBeInstanceOf(ObjectNotFoundError);
  });

  it('accepts a body of exactly maxBytes', async () => {
    const key = `${folder()}/exact`;
    expect(await store.put(key, chunked(randomBytes(4096), 1000), { contentType: 'text/plain', maxBytes: 4096 })).toEqual({
      key,
      bytes: 4096,
    });
    expect(await store.put(key, randomBytes(4096), { contentType: 'text/plain', maxBytes: 4096 })).toEqual({ key, bytes: 4096 });
  });

  it('rejects a Buffer over maxBytes without storing it', async () => {
    const key = `${folder()}/big`;
    await expect(store.put(key, randomBytes(4097), { contentType: 'text/plain', maxBytes: 4096 })).rejects.toBeInstanceOf(
      ObjectTooLargeError,
    );
    expect(await store.exists(key)).toBe(false);
  });

  it.each([
    { size: 3 * MiB, maxBytes: 1 * MiB, case: 'within the first part' },
    { size: 14 * MiB, maxBytes: 11 * MiB, case: 'after multipart parts were uploaded' },
  ])('aborts a stream over maxBytes $case, reading no further and storing nothing', async ({ size, maxBytes }) => {
    const key = `${folder()}/too-big.mp4`;
    const body = chunked(randomBytes(size));
    const error = await store.put(key, body, { contentType: 'video/mp4', maxBytes }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ObjectTooLargeError);
    expect(error).toMatchObject({ key, maxBytes });
    expect(body.bytesRead()).toBeLessThan(size);
    expect(body.destroyed).toBe(true);
    expect(await store.exists(key)).toBe(false);
  });

  it('keeps the previous object when a put fails', async () => {
    const key = `${folder()}/kept`;
    await store.put(key, Buffer.from('previous'), { contentType: 'text/plain' });
    await expect(store.put(key, chunked(randomBytes(2 * MiB)), { contentType: 'video/mp4', maxBytes: MiB })).rejects.toBeInstanceOf(
      ObjectTooLargeError,
    );
    const object = await store.get(key);
    expect(object.contentType).toBe('text/plain');
    expect((await buffer(object.body)).toString()).toBe('previous');
  });

  it('fails the put with the source stream error and stores nothing', async () => {
    const key = `${folder()}/broken-upload`;
    const sourceError = new Error('client went away');
    await expect(store.put(key, failingAfter(randomBytes(1000), sourceError), { contentType: 'video/mp4' })).rejects.toBe(
      sourceError,
    );
    expect(await store.exists(key)).toBe(false);
  });

  it.each([
    '',
    '/absolute',
    '..',
    'a/../b',
    'a/./b',
    'a//b',
    'trailing/',
    'back\\slash',
    'new\nline',
    'nul\u0000byte',
    'del\u007f',
    'lone\ud800surrogate',
    `${'x'.repeat(201)}/a`,
  ])('rejects the invalid key %j in every method', async (key) => {
    const expectInvalid = (promise: Promise<unknown>) => expect(promise).rejects.toBeInstanceOf(InvalidObjectKeyError);
    await expectInvalid(store.put(key, Buffer.from('x'), { contentType: 'text/plain' }));
    await expectInvalid(store.get(key));
    await expectInvalid(store.exists(key));
    await expectInvalid(store.delete(key));
    await expectInvalid(store.downloadUrl(key, { expiresInSeconds: 60 }));
  });

  it.each(['', '/', '/abs/', '../up/', 'a//', 'a/../b/'])('deletePrefix rejects the invalid prefix %j', async (prefix) => {
    await expect(store.deletePrefix(prefix)).rejects.toBeInstanceOf(InvalidObjectKeyError);
  });

  it('rejects a content type that could break a header', async () => {
    await expect(store.put(`${folder()}/x`, Buffer.from('x'), { contentType: 'text/plain\r\nx-evil: 1' })).rejects.toThrow(
      /content type/,
    );
  });

  it('downloadUrl can be fetched and returns the bytes', async () => {
    const key = `${folder()}/my song/out (final).mp4`;
    const data = randomBytes(2048);
    await store.put(key, data, { contentType: 'video/mp4' });
    const response = await fetch(await store.downloadUrl(key, { expiresInSeconds: 300 }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await response.arrayBuffer())).toEqual(data);
  });

  it('downloadUrl with a file name makes the response an attachment under that name', async () => {
    const key = `${folder()}/out.mp4`;
    await store.put(key, Buffer.from('video'), { contentType: 'video/mp4' });
    const response = await fetch(await store.downloadUrl(key, { expiresInSeconds: 300, fileName: 'Rex "sings" 🎵.mp4' }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="Rex _sings_ _.mp4"; filename*=UTF-8''Rex%20%22sings%22%20%F0%9F%8E%B5.mp4`,
    );
    expect(await response.text()).toBe('video');
  });
});

describe('S3ObjectStore specifics', () => {
  it('ensureBucket creates a missing bucket and accepts an existing one', async () => {
    const store = new S3ObjectStore({ endpoint: inject('s3Endpoint'), bucket: `ensure-${randomUUID().slice(0, 8)}`, ...s3Credentials });
    await expect(store.put('a', Buffer.from('a'), { contentType: 'text/plain' })).rejects.toThrow();
    await store.ensureBucket();
    await store.ensureBucket();
    await store.put('a', Buffer.from('a'), { contentType: 'text/plain' });
    expect(await store.exists('a')).toBe(true);
  });

  it('signs download URLs for publicEndpoint when one is set', async () => {
    const endpoint = inject('s3Endpoint');
    const publicEndpoint = endpoint.replace('127.0.0.1', 'localhost');
    const store = new S3ObjectStore({ endpoint, publicEndpoint, bucket, ...s3Credentials });
    await store.ensureBucket();
    await store.put('public/a.txt', Buffer.from('hello'), { contentType: 'text/plain' });
    const url = await store.downloadUrl('public/a.txt', { expiresInSeconds: 60 });
    expect(new URL(url).origin).toBe(new URL(publicEndpoint).origin);
    expect(await (await fetch(url)).text()).toBe('hello');
  });

  it('refuses expiries SigV4 cannot sign', async () => {
    const store = new S3ObjectStore({ endpoint: inject('s3Endpoint'), bucket, ...s3Credentials });
    await expect(store.downloadUrl('a', { expiresInSeconds: 8 * 24 * 3600 })).rejects.toThrow(RangeError);
    await expect(store.downloadUrl('a', { expiresInSeconds: 0 })).rejects.toThrow(RangeError);
  });

  it('requires accessKeyId and secretAccessKey together', () => {
    expect(() => new S3ObjectStore({ bucket, region: 'us-east-1', forcePathStyle: true, accessKeyId: 'only-id' })).toThrow(
      /together/,
    );
  });
});

describe('LocalObjectStore specifics', () => {
  let root: string;
  let store: LocalObjectStore;
  const publicBaseUrl = 'https://petsing.example/';

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'local-object-store-'));
    store = new LocalObjectStore({ root, publicBaseUrl, signingSecret: 'another-signing-secret-abcdef' });
  });
  afterAll(async () => rm(root, { recursive: true, force: true }));
  afterEach(() => vi.useRealTimers());

  const parse = (url: string) => {
    const { pathname, search } = new URL(url);
    return parseDownloadPath(pathname + search);
  };

  it('downloadUrl points at publicBaseUrl/files/<encoded key> with expiry and signature', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
    const url = await store.downloadUrl('videos/1/my song #1.mp4', { expiresInSeconds: 600 });
    const expires = Date.parse('2030-01-01T00:10:00Z') / 1000;
    expect(url).toMatch(
      new RegExp(`^https://petsing\\.example/files/videos/1/my%20song%20%231\\.mp4\\?expires=${expires}&signature=[\\w-]{43}$`),
    );
    expect(parse(url)).toEqual({ key: 'videos/1/my song #1.mp4', expires, signature: expect.any(String) });
  });

  it('verifies its own signatures', async () => {
    const request = parse(await store.downloadUrl('videos/1/out.mp4', { expiresInSeconds: 60, fileName: 'Rex.mp4' }))!;
    expect(request.fileName).toBe('Rex.mp4');
    expect(store.verifyDownloadSignature(request.key, request.expires, request.signature)).toBe('ok');
  });

  it('rejects a tampered key, expiry or signature as invalid', async () => {
    const { key, expires, signature } = parse(await store.downloadUrl('videos/1/out.mp4', { expiresInSeconds: 60 }))!;
    const flipped = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1);
    expect(store.verifyDownloadSignature('videos/2/out.mp4', expires, signature)).toBe('invalid');
    expect(store.verifyDownloadSignature(key, expires + 3600, signature)).toBe('invalid');
    expect(store.verifyDownloadSignature(key, expires, flipped)).toBe('invalid');
    expect(store.verifyDownloadSignature(key, expires, signature.slice(0, -1))).toBe('invalid');
    expect(store.verifyDownloadSignature(key, expires, `${signature}=`)).toBe('invalid');
    expect(store.verifyDownloadSignature(key, expires, '')).toBe('invalid');
    const otherSecret = new LocalObjectStore({ root, publicBaseUrl, signingSecret: 'a-different-secret-123456' });
    expect(otherSecret.verifyDownloadSignature(key, expires, signature)).toBe('invalid');
  });

  it('reports a correctly signed URL past its expiry as expired', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
    const { key, expires, signature } = parse(await store.downloadUrl('videos/1/out.mp4', { expiresInSeconds: 60 }))!;
    vi.setSystemTime(new Date('2030-01-01T00:00:59Z'));
    expect(store.verifyDownloadSignature(key, expires, signature)).toBe('ok');
    vi.setSystemTime(new Date('2030-01-01T00:01:00Z'));
    expect(store.verifyDownloadSignature(key, expires, signature)).toBe('expired');
  });

  it.each([
    '/other/videos/1/out.mp4?expires=1&signature=abc',
    '/files/videos/1/out.mp4',
    '/files/videos/1/out.mp4?signature=abc',
    '/files/videos/1/out.mp4?expires=1',
    '/files/videos/1/out.mp4?expires=soon&signature=abc',
    '/files/videos/1/out.mp4?expires=-1&signature=abc',
    '/files/videos/../secret?expires=1&signature=abc',
    '/files/videos/%2e%2e/secret?expires=1&signature=abc',
    '/files/bad%E0%A4%A?expires=1&signature=abc',
    '/files/?expires=1&signature=abc',
  ])('parseDownloadPath refuses %s', (target) => {
    expect(parseDownloadPath(target)).toBeNull();
  });

  it('refuses a key that is also a folder of other keys, with a clear error', async () => {
    await store.put('clash/a/b', Buffer.from('b'), { contentType: 'text/plain' });
    await expect(store.put('clash/a', Buffer.from('a'), { contentType: 'text/plain' })).rejects.toThrow(/also a folder/);
    await expect(store.put('clash/a/b/c', Buffer.from('c'), { contentType: 'text/plain' })).rejects.toThrow(/also a folder/);
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
    expect(await readdir(join(root, 'meta', 'clash'))).toEqual(['a']);
    expect(await readdir(join(root, 'meta', 'clash', 'a'))).toEqual(['b.json']);
    const kept = await store.get('clash/a/b');
    expect(kept.contentType).toBe('text/plain');
    expect((await buffer(kept.body)).toString()).toBe('b');
  });

  it('refuses a signing secret too short to be one', () => {
    expect(() => new LocalObjectStore({ root, publicBaseUrl, signingSecret: 'short' })).toThrow(/signingSecret/);
  });
});

describe('createObjectStore', () => {
  it('builds the implementation named by kind', () => {
    expect(createObjectStore({ kind: 'local', root: '/tmp/x', publicBaseUrl: 'http://localhost:8080', signingSecret: 'x'.repeat(32) })).toBeInstanceOf(
      LocalObjectStore,
    );
    expect(createObjectStore({ kind: 's3', bucket: 'b', ...s3Credentials })).toBeInstanceOf(S3ObjectStore);
  });

  it('rejects an invalid configuration', () => {
    expect(() => createObjectStore({ kind: 's3', bucket: 'b', ...s3Credentials, endpoint: 'not a url' })).toThrow();
  });
});
