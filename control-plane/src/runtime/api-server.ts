import { createServer, type Server } from 'node:http';
import { createApp } from '../http/app.ts';
import type { AppContext } from './app-context.ts';

export type RunningApiServer = { server: Server; port: number; close(): Promise<void> };

export async function startApiServer(context: AppContext, port = context.config.env.PORT): Promise<RunningApiServer> {
  const server = createServer(createApp(context));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, context.config.env.HOST, () => resolve());
  });
  const address = server.address();
  return {
    server,
    port: typeof address === 'object' && address ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
