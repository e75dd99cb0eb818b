import { z } from 'zod';
import { LocalObjectStore, localObjectStoreOptionsSchema } from './local-object-store.ts';
import type { ObjectStore } from './object-store.ts';
import { S3ObjectStore, s3ObjectStoreOptionsSchema } from './s3-object-store.ts';

export {
  attachmentDisposition,
  InvalidObjectKeyError,
  ObjectNotFoundError,
  ObjectTooLargeError,
  validateObjectKey,
  type DownloadUrlOptions,
  type GetResult,
  type ObjectStore,
  type PutOptions,
  type PutResult,
} from './object-store.ts';
export { S3ObjectStore, s3ObjectStoreOptionsSchema, type S3ObjectStoreOptions } from './s3-object-store.ts';
export {
  LocalObjectStore,
  localObjectStoreOptionsSchema,
  parseDownloadPath,
  type DownloadRequest,
  type DownloadSignatureCheck,
  type LocalObjectStoreOptions,
} from './local-object-store.ts';

/** Object storage settings as they appear in configuration; `kind` picks the implementation. */
export const objectStoreConfigSchema = z.discriminatedUnion('kind', [
  s3ObjectStoreOptionsSchema.extend({ kind: z.literal('s3') }),
  localObjectStoreOptionsSchema.extend({ kind: z.literal('local') }),
]);

export type ObjectStoreConfig = z.infer<typeof objectStoreConfigSchema>;
export type S3ObjectStoreConfig = Extract<ObjectStoreConfig, { kind: 's3' }>;
export type LocalObjectStoreConfig = Extract<ObjectStoreConfig, { kind: 'local' }>;

export function createObjectStore(config: S3ObjectStoreConfig): S3ObjectStore;
export function createObjectStore(config: LocalObjectStoreConfig): LocalObjectStore;
export function createObjectStore(config: ObjectStoreConfig): ObjectStore;
export function createObjectStore(config: ObjectStoreConfig): ObjectStore {
  // The stores' option schemas strip the extra `kind` field.
  switch (config.kind) {
    case 's3':
      return new S3ObjectStore(config);
    case 'local':
      return new LocalObjectStore(config);
  }
}
