import { request } from 'node:http';
import { createServer, type Server } from 'node:http';
import { chmod, rm } from 'node:fs/promises';
import { join } from 'node:path';
import express from 'express';
import { runOperatorCommand } from '../cli/operator-commands.ts';
import { errorHandler } from '../http/errors.ts';
import type { AppContext } from './app-context.ts';

const controlSocketPath = (dataDir: string) => join(dataDir, 'control.sock');

/**
 * A local-only control channel for operator commands while the embedded service holds PGlite
 * (a single-process database). It is a Unix socket readable only by the service's own user.
 */
export async function startControlSocket(context: AppContext): Promise<{ close(): Promise<void> }> {
  const path = controlSocketPath(context.config.dataDir);
  const app = express();
  app.use(express.json());
  app.post('/commands/:name', async (req, res) => {
    res.json({ result: await runOperatorCommand(context, req.params.name, req.body) });
  });
  app.use(errorHandler(context.config.baseUrl, context.logger));

  await rm(path, { force: true });
  const server: Server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  await chmod(path, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

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
