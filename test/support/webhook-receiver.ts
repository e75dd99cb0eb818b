import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';

export type Reception = { path: string; headers: Record<string, string>; body: string; answered: number };

/**
 * A webhook receiver on 127.0.0.1 that records every request and answers by path: `answer(path, webhookId, seen)`
 * gives the status (default 200), where `seen` counts earlier requests to the path with the same webhook-id. It also
 * serves the pet photo at /pet.png, so one fixture host is both the photo's and the receiver's.
 */
export async function startWebhookReceiver(photo: Buffer, answer: (path: string, webhookId: string, seen: number, body: string) => number = () => 200) {
  const receptions: Reception[] = [];
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '';
    if (req.method === 'GET' && path === '/pet.png') {
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': photo.length }).end(photo);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers = flatten(req.headers);
      const id = headers['webhook-id'] ?? '';
      const seen = receptions.filter((reception) => reception.path === path && reception.headers['webhook-id'] === id).length;
      const body = Buffer.concat(chunks).toString('utf8');
      const status = answer(path, id, seen, body);
      receptions.push({ path, headers, body, answered: status });
      res.writeHead(status, { 'Content-Type': 'text/plain' }).end(status < 300 ? 'ok' : 'receiver says no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    receptions,
    /** The receptions on a path, each parsed. */
    on: (path: string) => receptions.filter((reception) => reception.path === path).map((reception) => ({ ...reception, event: JSON.parse(reception.body) as { type: string; timestamp: string; data: Record<string, unknown> } })),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What a receiver does with the standardwebhooks package: throws unless a signature made with `secret` matches. */
export function verifyWith(secret: string, reception: Reception): unknown {
  return new Webhook(secret).verify(reception.body, {
    'webhook-id': reception.headers['webhook-id']!,
    'webhook-timestamp': reception.headers['webhook-timestamp']!,
    'webhook-signature': reception.headers['webhook-signature']!,
  });
}

function flatten(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : (value ?? '')]));
}
