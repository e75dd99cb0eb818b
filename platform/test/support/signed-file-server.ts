import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import {
  attachmentDisposition,
  ObjectNotFoundError,
  parseDownloadPath,
  type LocalObjectStore,
} from '../../src/storage/index.ts';

/**
 * Serves `/files/*` the way the control plane does, so URLs from LocalObjectStore.downloadUrl can
 * be fetched in tests. The store is looked up per request because it is made after the port is known.
 */
export async function startSignedFileServer(store: () => LocalObjectStore): Promise<{ baseUrl: string; server: Server }> {
  const server = createServer((req, res) => {
    const refuse = (status: number, error: string) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error }));
    };
    const request = parseDownloadPath(req.url ?? '');
    if (!request) return refuse(403, 'invalid');
    const check = store().verifyDownloadSignature(request.key, request.expires, request.signature);
    if (check !== 'ok') return refuse(403, check);
    store()
      .get(request.key)
      .then(async (object) => {
        res.writeHead(200, {
          'content-type': object.contentType,
          'content-length': String(object.bytes),
          ...(request.fileName !== undefined && { 'content-disposition': attachmentDisposition(request.fileName) }),
        });
        await pipeline(object.body, res);
      })
      .catch((error: unknown) => {
        if (res.headersSent) res.destroy();
        else refuse(error instanceof ObjectNotFoundError ? 404 : 500, String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, server };
}
