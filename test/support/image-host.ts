import { createServer, type Server } from 'node:http';
import { classifyAddress } from '../../control-plane/src/media/address-policy.ts';
import { systemResolver } from '../../control-plane/src/media/host-resolvers.ts';
import { createUserUrlFetcher, type UserUrlFetcher } from '../../control-plane/src/media/safe-fetch.ts';
import { startTestService } from './test-service.ts';
import { petPhoto } from './pet-photo.ts';

// A public-looking name: the fixture's resolver maps it to the local server (no DNS query leaves the machine).
export const FIXTURE_HOST = 'photos.petsing-fixtures.com';

/**
 * A stand-in for "a public web server hosting the pet photo": a local HTTP server under a made-up host
 * name, and a fetcher whose address policy admits exactly that server (everything else stays refused).
 */
export async function startImageHost(files: Record<string, { body: Buffer; contentType: string }>): Promise<{
  url(path: string): string;
  fetcher: UserUrlFetcher;
  requests: string[];
  close(): Promise<void>;
}> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const file = files[req.url ?? ''];
    if (!file) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': file.contentType, 'Content-Length': file.body.length }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const fetcher = createUserUrlFetcher({
    addressPolicy: { checkAddress: (address) => (address === '127.0.0.1' ? null : classifyAddress(address)), extraPorts: [port] },
    resolver: async (host, signal) => (host === FIXTURE_HOST ? [{ address: '127.0.0.1', family: 4 }] : systemResolver(host, signal)),
  });
  return {
    url: (path) => `http://${FIXTURE_HOST}:${port}${path}`,
    fetcher,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The whole service with Temporal and both workers, whose image_url fetches reach a local image host
 * serving the sample pet at /pet.png (and `files`). Small frames keep renders fast on two cores.
 */
export async function startRenderingService(env: Record<string, string> = {}, files: Record<string, { body: Buffer; contentType: string }> = {}) {
  const imageHost = await startImageHost({ '/pet.png': { body: await petPhoto(512), contentType: 'image/png' }, ...files });
  const service = await startTestService({
    temporal: true,
    controlWorker: true,
    renderWorker: true,
    userUrlFetcher: imageHost.fetcher,
    env: { ALLOW_HTTP_IMAGE_URLS: 'true', RENDER_OUTPUT_SIZE: '192', RATE_LIMIT_WRITES_PER_MINUTE: '40', ...env },
  });
  return {
    service,
    imageHost,
    stop: async () => {
      await service.stop();
      await imageHost.close();
    },
  };
}
