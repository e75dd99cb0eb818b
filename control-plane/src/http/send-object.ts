import type { Response } from 'express';
import { pipeline } from 'node:stream/promises';
import type { GetResult } from '@petsing/platform/storage';

/**
 * Streams a stored object as the response. pipeline() (unlike pipe) destroys both sides when either
 * fails: a storage read that breaks midway ends the response instead of crashing the process, and a
 * client that hangs up releases the file handle or S3 connection. Headers are sent by then, so a failure
 * can only cut the body short.
 */
export async function sendObject(res: Response, object: GetResult, headers: Record<string, string>): Promise<void> {
  res.set({ 'Content-Length': String(object.bytes), ...headers });
  await pipeline(object.body, res).catch(() => {});
}
