import { Transform, type TransformCallback } from 'node:stream';
import { ObjectTooLargeError } from './object-store.ts';

/**
 * Passes a put's body through, counting bytes, and fails with ObjectTooLargeError the moment the
 * count passes maxBytes, so an oversized upload stops instead of being read to the end.
 */
export class ByteLimit extends Transform {
  bytes = 0;

  constructor(
    private readonly key: string,
    private readonly maxBytes: number | undefined,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.maxBytes !== undefined && this.bytes > this.maxBytes) {
      callback(new ObjectTooLargeError(this.key, this.maxBytes));
    } else {
      callback(null, chunk);
    }
  }
}

export function checkBufferSize(key: string, body: Buffer, maxBytes: number | undefined): void {
  if (maxBytes !== undefined && body.length > maxBytes) throw new ObjectTooLargeError(key, maxBytes);
}
