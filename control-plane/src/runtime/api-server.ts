import { createServer, type Server } from 'node:http';
import { apiPortTaken } from './api-port.ts';
import { createApp } from '../http/app.ts';
import { answerClientError } from '../http/errors.ts';
import { attachStatusWebsocket } from '../http/status-websocket.ts';
import type { AppContext } from './app-context.ts';

export type RunningApiServer = { server: Server; port: number; close(): Promise<void> };

export async function startApiServer(context: AppContext, port = context.config.env.PORT): Promise<RunningApiServer> {
  const server = createServer(createApp(context));
  server.on('clientError', answerClientError(context.config.baseUrl));
  const { HOST } = context.config.env;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE' ? apiPortTaken(HOST, port) : error));
    server.listen(port, HOST, () => resolve());
  });
  if (!context.config.devSignIn && !context.config.externalIdentityProvider) {
    context.logger.warn(
      { host: HOST },
      `The development sign-in (POST /dev-identity/token) is off: HOST=${HOST} is not a loopback address, and it lets anyone act as any ` +
        'email address. Configure OIDC_ISSUER, OIDC_AUDIENCE and OIDC_JWKS_URL for sign-in on this interface, or listen on 127.0.0.1; ' +
        '`petsing dev-token` still mints development ID tokens on this machine.',
    );
  }
  // The web app signs in with ID tokens, API clients with API keys or OAuth tokens (those for the API, whose
  // videos the socket reports on); a JWT is tried as an ID token.
  const websocket = await attachStatusWebsocket(server, context, async (token) => {
    const credential = await context.services.credentials.verify(token, 'api');
    if (credential) return { userId: credential.userId };
    if (token.split('.').length !== 3) return undefined;
    const user = await context.services.identity.signIn(token).catch(() => undefined);
    return user && { userId: user.id };
  });
  const { credentials, apiKeys, videos } = context.services;
  const unwatchRevocations = await credentials.watchRevocations(context.database.listen);
  const unfollowVideoChanges = await videos.followChanges(context.database.listen);
  const address = server.address();
  return {
    server,
    port: typeof address === 'object' && address ? address.port : port,
    close: async () => {
      await websocket.close();
      // Open waits and event streams answer now, or the server would wait for them to end.
      await context.services.videoWatch.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await unwatchRevocations();
      await unfollowVideoChanges();
      await apiKeys.flushUses();
    },
  };
}
