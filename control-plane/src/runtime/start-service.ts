import type { ControlPlaneConfig } from '../config/env.ts';
import type { Logger } from '../logging/logger.ts';
import { startApiServer } from './api-server.ts';
import { openAppContext } from './bootstrap.ts';
import { startControlSocket } from './control-socket.ts';
import { Lifecycle } from './lifecycle.ts';
import { startEmbeddedTemporal } from '../temporal/temporal-connection.ts';

export type StartedService = { lifecycle: Lifecycle; apiUrl: string; wsUrl: string; temporalUiUrl: string | undefined };

/**
 * `petsing start`: the whole service in one process — the API, a Temporal dev server (unless
 * TEMPORAL_ADDRESS is set), the control-plane worker and a render-node worker.
 */
export async function startService(config: ControlPlaneConfig, logger: Logger): Promise<StartedService> {
  const lifecycle = new Lifecycle(logger);
  try {
    const context = await openAppContext(config, logger);
    lifecycle.add('database', context.close);
    if (context.database.kind === 'pglite') {
      const controlSocket = await startControlSocket(context);
      lifecycle.add('control socket', controlSocket.close);
    }
    await context.services.templates.seed(logger);

    let temporalUiUrl: string | undefined;
    if (!config.env.TEMPORAL_ADDRESS) {
      const temporal = await startEmbeddedTemporal(config, logger);
      lifecycle.add('temporal dev server', temporal.stop);
      temporalUiUrl = temporal.uiUrl;
    }

    const api = await startApiServer(context);
    lifecycle.add('api server', api.close);
    return { lifecycle, apiUrl: config.baseUrl, wsUrl: config.wsUrl, temporalUiUrl };
  } catch (error) {
    await lifecycle.stop();
    throw error;
  }
}
