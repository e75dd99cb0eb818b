import type { Response } from 'express';
import { AppError } from '../errors/app-error.ts';

/**
 * Runs long work (a synthesizer, yt-dlp, a download, ffmpeg) with a signal that aborts when the client
 * hangs up, so nothing keeps running for nobody. A failure after the hang-up is answered as 499 (client
 * closed request): nobody reads it, and it is no server failure worth an error log.
 */
export async function whileConnected<T>(res: Response, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const hangUp = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) hangUp.abort(new Error('The client closed the connection.'));
  };
  res.on('close', onClose);
  try {
    return await work(hangUp.signal);
  } catch (error) {
    if (hangUp.signal.aborted) throw new AppError('invalid_request', 'The request was cancelled by the client.', { status: 499, cause: error });
    throw error;
  } finally {
    res.off('close', onClose);
  }
}
