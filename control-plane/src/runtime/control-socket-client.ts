import { request } from 'node:http';
import { join } from 'node:path';

/**
 * The CLI's side of the control socket (control-socket.ts): only node:http, so an operator command run while the
 * embedded service holds the database loads nothing of the service.
 */
export const controlSocketPath = (dataDir: string) => join(dataDir, 'control.sock');

export class ControlSocketUnavailable extends Error {}

/** Sends a command to a running embedded service; throws ControlSocketUnavailable when none listens. */
export function callControlSocket(dataDir: string, name: string, input: unknown): Promise<unknown> {
  const body = JSON.stringify(input);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath: controlSocketPath(dataDir),
        path: `/commands/${encodeURIComponent(name)}`,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            result?: unknown;
            error?: { message: string; hint?: string };
          };
          if (res.statusCode === 200) resolve(payload.result);
          else reject(new Error(`${payload.error?.message ?? 'command failed'}${payload.error?.hint ? ` (${payload.error.hint})` : ''}`));
        });
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      reject(['ENOENT', 'ECONNREFUSED'].includes(error.code ?? '') ? new ControlSocketUnavailable(error.message) : error);
    });
    req.end(body);
  });
}
