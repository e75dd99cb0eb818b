import { Router } from 'express';
import { attachmentDisposition, LocalObjectStore, parseDownloadPath } from '@petsing/platform/storage';
import { AppError } from '../../errors/app-error.ts';
import type { AppContext } from '../../runtime/app-context.ts';
import { sendObject } from '../send-object.ts';

/**
 * Serves the local object store's expiring HMAC-signed download links (the embedded default; with S3
 * the links are presigned and point at the bucket). Tampered or expired links get 403 JSON.
 */
export function filesRoutes(context: AppContext): Router {
  const router = Router();
  const store = context.objectStore;
  if (!(store instanceof LocalObjectStore)) return router;

  router.get('/files/*path', async (req, res) => {
    const request = parseDownloadPath(req.originalUrl);
    const check = request ? store.verifyDownloadSignature(request.key, request.expires, request.signature) : 'invalid';
    if (!request || check !== 'ok') {
      throw new AppError(
        'download_link_invalid',
        check === 'expired' ? 'This download link has expired.' : 'This download link is not valid.',
      );
    }
    const object = await store.get(request.key);
    await sendObject(res, object, {
      'Content-Type': object.contentType,
      'Cache-Control': 'private, max-age=300',
      ...(request.fileName ? { 'Content-Disposition': attachmentDisposition(request.fileName) } : {}),
    });
  });
  return router;
}
