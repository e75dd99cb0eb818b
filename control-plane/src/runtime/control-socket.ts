import { createServer, type Server } from 'node:http';
import { chmod, rm } from 'node:fs/promises';
import express from 'express';
import { runOperatorCommand } from '../cli/operator-commands.ts';
import { errorHandler } from '../http/errors.ts';
import { jsonBody } from '../http/json-body.ts';
import type { AppContext } from './app-context.ts';
import { controlSocketPath } from './control-socket-client.ts';

/** express.json's default limit, which this socket had: a command's arguments are a few short strings. */
const CONTROL_BODY_LIMIT_KB = 100;

/**
 * A local-only control channel for operator commands while the embedded service holds PGlite
 * (a single-process database). It is a Unix socket readable only by the service's own user.
 */
export async function startControlSocket(context: AppContext): Promise<{ close(): Promise<void> }> {
  const path = controlSocketPath(context.config.dataDir);
  const app = express();
  app.use(jsonBody(CONTROL_BODY_LIMIT_KB));
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
