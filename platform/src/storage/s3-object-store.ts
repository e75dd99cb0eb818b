import { pipeline, Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  AbortMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  type BucketLocationConstraint,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { z } from 'zod';
import { ByteLimit, checkBufferSize } from './byte-limit.ts';
import {
  attachmentDisposition,
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

/** The most keys one DeleteObjects request takes. */
const DELETE_BATCH_SIZE = 1000;

const httpUrl = z.url({ protocol: /^https?$/ });

export const s3ObjectStoreOptionsSchema = z.object({
  /** Omitted for AWS itself; the S3 API URL of MinIO, SeaweedFS, R2 and the like. */
  endpoint: httpUrl.optional(),
  region: z.string().min(1),
  bucket: z.string().min(1),
  /** Omitted together with secretAccessKey to use the SDK's default credential chain (env, IAM role). */
  accessKeyId: z.string().min(1).optional(),
  secretAccessKey: z.string().min(1).optional(),
  /** Needed by most self-hosted servers, which do not serve bucket-name subdomains. */
  forcePathStyle: z.boolean(),
  /** Where browsers reach the server, when that differs from endpoint (e.g. a container hostname). */
  publicEndpoint: httpUrl.optional(),
});

export type S3ObjectStoreOptions = z.infer<typeof s3ObjectStoreOptionsSchema>;

/** SigV4 presigned URLs cannot live longer than seven days. */
const MAX_PRESIGN_SECONDS = 7 * 24 * 60 * 60;

export class S3ObjectStore implements ObjectStore {
  private readonly client: S3Client;
  /** Signs download URLs for the public endpoint: the host is part of the signature. */
  private readonly presigner: S3Client;
  private readonly bucket: string;
  private readonly region: string;

  constructor(options: S3ObjectStoreOptions) {
    const parsed = s3ObjectStoreOptionsSchema.parse(options);
    if ((parsed.accessKeyId === undefined) !== (parsed.secretAccessKey === undefined)) {
      throw new TypeError('accessKeyId and secretAccessKey must be given together');
    }
    const config: S3ClientConfig = {
      region: parsed.region,
      endpoint: parsed.endpoint,
      forcePathStyle: parsed.forcePathStyle,
      credentials:
        parsed.accessKeyId !== undefined && parsed.secretAccessKey !== undefined
          ? { accessKeyId: parsed.accessKeyId, secretAccessKey: parsed.secretAccessKey }
          : undefined,
      // The SDK's default extra checksums (CRC32 headers, aws-chunked bodies) are rejected by
      // several S3-compatible servers; only send them where the API requires one.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    this.client = new S3Client(config);
    this.presigner = parsed.publicEndpoint === undefined ? this.client : new S3Client({ ...config, endpoint: parsed.publicEndpoint });
    this.bucket = parsed.bucket;
    this.region = parsed.region;
  }

  /** Creates the bucket when it does not exist yet; meant for development and tests. */
  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return;
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    try {
      await this.client.send(
        new CreateBucketCommand({
          Bucket: this.bucket,
          // us-east-1 is the one region that rejects an explicit location constraint.
          CreateBucketConfiguration:
            this.region === 'us-east-1' ? undefined : { LocationConstraint: this.region as BucketLocationConstraint },
        }),
      );
    } catch (error) {
      if (!(error instanceof S3ServiceException && error.name === 'BucketAlreadyOwnedByYou')) throw error;
    }
  }

  async put(key: string, body: Readable | Buffer, options: PutOptions): Promise<PutResult> {
    validateObjectKey(key);
    validatePutOptions(options);
    if (Buffer.isBuffer(body)) {
      checkBufferSize(key, body, options.maxBytes);
      await this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: body.length, ContentType: options.contentType }),
      );
      return { key, bytes: body.length };
    }

    const limit = new ByteLimit(key, options.maxBytes);
    // Failures travel through `limit` into the upload (a too-large body, a failing source), and
    // destroying `limit` stops the source; the upload's rejection reports the error.
    pipeline(body, limit, () => {});
    // A body under one part (5 MiB) becomes a single PutObject, so S3 only ever sees complete
    // objects; a failed multipart upload is aborted by Upload itself (leavePartsOnError: false).
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: limit, ContentType: options.contentType },
    });
    try {
      await upload.done();
    } catch (error) {
      limit.destroy();
      throw error;
    }
    return { key, bytes: limit.bytes };
  }

  async get(key: string): Promise<GetResult> {
    validateObjectKey(key);
    try {
      const output = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!(output.Body instanceof Readable)) throw new Error('S3 GetObject did not return a Node.js stream');
      return {
        body: output.Body,
        contentType: output.ContentType ?? 'application/octet-stream',
        bytes: output.ContentLength ?? 0,
      };
    } catch (error) {
      if (error instanceof S3ServiceException && error.name === 'NoSuchKey') throw new ObjectNotFoundError(key);
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    validateObjectKey(key);
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    validateObjectKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async deletePrefix(prefix: string): Promise<number> {
    let deleted = 0;
    let batch: { Key: string }[] = [];
    const flush = async () => {
      const result = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch, Quiet: true } }));
      const [firstError] = result.Errors ?? [];
      if (firstError) {
        throw new Error(
          `could not delete ${result.Errors?.length} object(s) under ${normalizePrefix(prefix)}, e.g. ${firstError.Key}: ${firstError.Code} ${firstError.Message}`,
        );
      }
      deleted += batch.length;
      batch = [];
    };
    for await (const { key } of this.list(prefix)) {
      batch.push({ Key: key });
      if (batch.length === DELETE_BATCH_SIZE) await flush();
    }
    if (batch.length > 0) await flush();
    return deleted;
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    let continuationToken: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: normalizePrefix(prefix), ContinuationToken: continuationToken }),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key !== undefined) yield { key: object.Key, lastModified: object.LastModified ?? new Date(0) };
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken !== undefined);
  }

  /** Multipart uploads a crashed process never completed nor aborted: their parts are stored (and billed) until aborted. */
  async removeAbandonedWrites(startedBefore: Date): Promise<number> {
    let removed = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      const page = await this.client.send(
        new ListMultipartUploadsCommand({ Bucket: this.bucket, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }),
      );
      for (const upload of page.Uploads ?? []) {
        if (!upload.Key || !upload.UploadId || !upload.Initiated || upload.Initiated >= startedBefore) continue;
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.Key, UploadId: upload.UploadId }));
        removed++;
      }
      if (!page.IsTruncated) return removed;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  }

  async downloadUrl(key: string, options: DownloadUrlOptions): Promise<string> {
    validateObjectKey(key);
    validateExpiresIn(options.expiresInSeconds, MAX_PRESIGN_SECONDS);
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentDisposition: options.fileName === undefined ? undefined : attachmentDisposition(options.fileName),
    });
    return getSignedUrl(this.presigner, command, { expiresIn: options.expiresInSeconds });
  }
}

/** HEAD responses have no body, so a missing object or bucket shows up only as a 404. */
function isNotFound(error: unknown): boolean {
  return error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404;
}
