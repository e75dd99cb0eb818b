import { Command, Option } from 'commander';
import { ConfigError, temporalAddress } from '@petsing/platform/config';
import type { ControlPlaneConfig } from '../config/env.ts';
import type { Logger } from '../logging/logger.ts';
import type { ServiceParts } from '../runtime/start-service.ts';
import type { OperatorCommandName } from './operator-commands.ts';

// Commands import what they need when they run: a render node (`worker render`) never loads the
// control plane's database, HTTP or Temporal-client code, and `--help` stays fast.

const program = new Command('petsing')
  .description('Operate petsing: start the service or its parts, migrate, and manage users, keys and credits.')
  .addOption(new Option('--json', 'print machine-readable JSON'))
  .showHelpAfterError();

let cachedConfig: ControlPlaneConfig | undefined;
async function config(): Promise<ControlPlaneConfig> {
  const { loadControlPlaneConfig } = await import('../config/env.ts');
  cachedConfig ??= loadControlPlaneConfig(process.env);
  return cachedConfig;
}

function print(result: Record<string, unknown>, human: string): void {
  console.log(program.opts<{ json?: boolean }>().json ? JSON.stringify(result) : human);
}

/** How long an operator command waits for a running `petsing start` whose API process is (re)starting. */
const CONTROL_SOCKET_WAIT_MS = 90_000;

/**
 * Runs an operator command against the database: through the running embedded service if there is one. While a
 * `petsing start` runs on this DATA_DIR its API process holds the embedded database, or is about to open it again
 * (starting, or restarted after a crash), so the command waits for its control socket rather than open it too.
 */
async function operate(name: OperatorCommandName, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const settings = await config();
  if (settings.embedded.database) {
    const [{ callControlSocket, ControlSocketUnavailable }, { runningSupervisor }] = await Promise.all([
      import('../runtime/control-socket-client.ts'),
      import('../runtime/supervisor-pid.ts'),
    ]);
    const deadline = Date.now() + CONTROL_SOCKET_WAIT_MS;
    for (;;) {
      try {
        return (await callControlSocket(settings.dataDir, name, input)) as Record<string, unknown>;
      } catch (error) {
        if (!(error instanceof ControlSocketUnavailable)) throw error;
      }
      if ((await runningSupervisor(settings.dataDir)) === undefined) break;
      if (Date.now() > deadline) {
        throw new Error(`petsing start is running on ${settings.dataDir}, but its API process has not answered for ${CONTROL_SOCKET_WAIT_MS / 1000} s; see its log.`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  const [{ openAppContext }, { createLogger }, { runOperatorCommand }] = await Promise.all([
    import('../runtime/bootstrap.ts'),
    import('../logging/logger.ts'),
    import('./operator-commands.ts'),
  ]);
  const context = await openAppContext(settings, createLogger('warn', 'petsing-cli'));
  try {
    return (await runOperatorCommand(context, name, input)) as Record<string, unknown>;
  } finally {
    await context.close();
  }
}

/** `petsing api`, `petsing worker control` or `petsing serve`: the control-plane parts of one process. */
async function runParts(parts: ServiceParts): Promise<void> {
  const { followSupervisor } = await import('../runtime/supervised-child.ts');
  const supervisor = followSupervisor();
  const settings = await config();
  const [{ createLogger }, { startService }, { keepDataPrivate }] = await Promise.all([
    import('../logging/logger.ts'),
    import('../runtime/start-service.ts'),
    import('../runtime/private-files.ts'),
  ]);
  await keepDataPrivate(settings.dataDir);
  const logger = createLogger(settings.env.LOG_LEVEL);
  const lifecycle = await startService(settings, logger, parts);
  lifecycle.exitOnSignals();
  // Under `petsing start`, which says what runs once every part does.
  if (supervisor.serving(lifecycle)) return;
  announce(logger, 'petsing is running', {
    ...(parts.api ? { api: settings.baseUrl, webSocket: settings.wsUrl } : {}),
    ...(parts.controlWorker ? { controlWorker: 'serving the control task queue' } : {}),
    temporal: temporalAddress(settings.env),
    data: settings.dataDir,
  });
}

/**
 * Says that the service runs, as every event, in one JSON line (at `info`, whatever LOG_LEVEL: the banner was always
 * printed); at a terminal, also as a block a person reads (`message`, then each field on a line of its own). A log
 * (a pipe, a file) gets the JSON line only.
 */
function announce(logger: Logger, message: string, fields: Partial<Record<keyof typeof ANNOUNCED, string>>): void {
  logger.child({}, { level: 'info' }).info(fields, message);
  if (!process.stdout.isTTY) return;
  const lines = Object.entries(fields).map(([name, value]) => `  ${`${ANNOUNCED[name as keyof typeof ANNOUNCED]}:`.padEnd(16)} ${value}`);
  console.log([message, ...lines].join('\n'));
}

/** The fields `announce` logs, and what the block at a terminal calls them. */
const ANNOUNCED = {
  api: 'API',
  webSocket: 'WebSocket',
  processes: 'Processes',
  controlWorker: 'Control worker',
  taskQueues: 'Task queues',
  temporal: 'Temporal',
  temporalUi: 'Temporal UI',
  data: 'Data',
};

program
  .command('start')
  .description('start the whole service, each part a process it supervises: API and websocket, control worker, render worker, and Temporal (a dev server unless TEMPORAL_ADDRESS is set)')
  .action(async () => {
    const settings = await config();
    const [{ createLogger }, { superviseService }, { keepDataPrivate }] = await Promise.all([
      import('../logging/logger.ts'),
      import('../runtime/supervisor.ts'),
      import('../runtime/private-files.ts'),
    ]);
    await keepDataPrivate(settings.dataDir);
    const logger = createLogger(settings.env.LOG_LEVEL);
    const started = await superviseService(settings, logger);
    announce(logger, 'petsing is running', {
      api: started.apiUrl,
      webSocket: started.wsUrl,
      processes: started.parts.join(', '),
      temporalUi: started.temporalUiUrl ?? '(external Temporal cluster)',
      data: settings.dataDir,
    });
    // A render worker that cannot start (a wrong RENDER_* setting) stops the whole service, as any part would.
    await started.renderWorkerServing.catch(async (error: unknown) => {
      await started.lifecycle.stop();
      throw error;
    });
  });

program
  .command('serve')
  .description('start the API and the control worker in one process (what `petsing start` runs on the embedded database)')
  .action(() => runParts({ api: true, controlWorker: true }));

program
  .command('api')
  .description('start only the API server (and websocket)')
  .action(() => runParts({ api: true, controlWorker: false }));

const worker = program.command('worker').description('start one Temporal worker');
worker
  .command('control')
  .description('the control-plane worker: workflows and database activities')
  .action(() => runParts({ api: false, controlWorker: true }));
worker
  .command('render')
  .description('a render node: the lip-sync model on the GPU task queue (needs no database)')
  .action(async () => {
    const { followSupervisor } = await import('../runtime/supervised-child.ts');
    const supervisor = followSupervisor();
    const [
      { loadRenderWorkerEnv, prometheusRenderNodeMetrics, RENDER_TASK_QUEUES, startRenderWorker },
      { installTemporalRuntime, resolveDataDir },
      { startProcessMetrics },
      { createLogger, messageFirstLogger },
      { Lifecycle },
      { keepDataPrivate },
      { stopTracing },
    ] = await Promise.all([
      import('@petsing/render-node'),
      import('@petsing/platform/runtime'),
      import('@petsing/platform/metrics'),
      import('../logging/logger.ts'),
      import('../runtime/lifecycle.ts'),
      import('../runtime/private-files.ts'),
      import('@petsing/platform/tracing'),
    ]);
    const env = loadRenderWorkerEnv(process.env);
    await keepDataPrivate(resolveDataDir(env));
    const logger = createLogger(env.LOG_LEVEL, 'petsing-render-node');
    // GET /metrics on RENDER_METRICS_PORT; the Temporal SDK's own 100 above it (docs/metrics.md).
    const processMetrics = await startProcessMetrics({ host: env.METRICS_HOST, port: env.RENDER_METRICS_PORT, setting: 'RENDER_METRICS_PORT', temporalWorkers: true });
    const lifecycle = new Lifecycle(logger);
    lifecycle.add('traces', stopTracing);
    if (processMetrics) lifecycle.add('metrics endpoint', processMetrics.close);
    installTemporalRuntime(logger.child({ part: 'temporal' }), { metricsBindAddress: processMetrics?.temporalBindAddress, server: env, activityOnlyTaskQueues: RENDER_TASK_QUEUES });
    // The worker polls before it has finished starting (its scratch sweep, its models' warm-up): a SIGTERM in that
    // window must already hand a task it took back, not kill the process with the signal's default.
    const starting = startRenderWorker(env, messageFirstLogger(logger), processMetrics && prometheusRenderNodeMetrics(processMetrics.registry));
    lifecycle.add('render worker', async () => (await starting).stop());
    lifecycle.exitOnSignals();
    await starting;
    if (!supervisor.serving(lifecycle)) announce(logger, 'petsing render node is serving', { taskQueues: RENDER_TASK_QUEUES.join(', ') });
  });

program
  .command('migrate')
  .description('apply database migrations')
  .action(async () => {
    await operate('migrate', {});
    print({ migrated: true }, 'Database is up to date.');
  });

const users = program.command('users').description('manage users');
users
  .command('create')
  .requiredOption('--email <email>', 'email address')
  .action(async (options: { email: string }) => {
    const user = await operate('users.create', { email: options.email });
    print(user, `Created user ${String(user.id)} <${String(user.email)}>`);
  });

const apiKeys = program.command('api-keys').description('manage API keys');
apiKeys
  .command('create')
  .requiredOption('--user <id|email>', 'the owner, by user id or email')
  .requiredOption('--scopes <scopes>', 'videos:read or videos:read,videos:write')
  .option('--name <name>', 'a label to recognise the key by')
  .action(async (options: { user: string; scopes: string; name?: string }) => {
    const created = await operate('api-keys.create', { ...options });
    print(
      created,
      `${String(created.key)}\n\nThis key is shown once and cannot be recovered. Scopes: ${(created.scopes as string[]).join(', ')}`,
    );
  });

apiKeys
  .command('list')
  .requiredOption('--user <id|email>', 'the owner, by user id or email')
  .action(async (options: { user: string }) => {
    const listed = await operate('api-keys.list', options);
    const keys = listed.keys as { id: string; display_prefix: string; scopes: string[]; last_used_at: string | null; revoked_at: string | null }[];
    print(listed, keys.map((k) => `${k.id}  ${k.display_prefix}…  ${k.scopes.join(',')}  last used ${k.last_used_at ?? 'never'}${k.revoked_at ? '  REVOKED' : ''}`).join('\n') || 'No API keys.');
  });
apiKeys
  .command('revoke')
  .requiredOption('--user <id|email>', 'the owner, by user id or email')
  .requiredOption('--id <key-id>', 'the key id (from api-keys list)')
  .action(async (options: { user: string; id: string }) => {
    const revoked = await operate('api-keys.revoke', options);
    print(revoked, `Revoked API key ${String(revoked.id)}; requests with it now get 401.`);
  });

const credits = program.command('credits').description('manage API credits');
credits
  .command('grant')
  .requiredOption('--user <id|email>', 'the recipient, by user id or email')
  .requiredOption('--amount <n>', 'how many credits')
  .action(async (options: { user: string; amount: string }) => {
    const granted = await operate('credits.grant', options);
    print(granted, `Granted ${String(granted.granted)} credits; balance is now ${String(granted.balance)}.`);
  });

const videos = program.command('videos').description('look at videos of any account');
videos
  .command('show')
  .description('a video\'s record: status, failure, face hints, the photo check it keeps and where its face came from')
  .requiredOption('--id <video-id>', 'the video id')
  .action(async (options: { id: string }) => {
    const shown = await operate('videos.show', options);
    const face = shown.face_source ? `${String(shown.face_source)}${shown.face_model ? ` (${String(shown.face_model)})` : ''}` : 'not recorded';
    print(
      shown,
      [
        `${String(shown.id)}  ${String(shown.status)}${shown.failure_code ? ` (${String(shown.failure_code)}: ${String(shown.failure_reason)})` : ''}  user ${String(shown.user_id)}`,
        `face from: ${face}; photo check kept: ${shown.photo_check ? 'yes' : 'no'}; face hints: ${shown.face_hints ? JSON.stringify(shown.face_hints) : 'none'}`,
        `sync: ${shown.sync ? JSON.stringify(shown.sync) : 'not recorded'}`,
      ].join('\n'),
    );
  });

const emails = program.command('emails').description('lifecycle email (welcome, video ready, free credits renewed)');
emails
  .command('list')
  .description('show the email outbox, newest first (with no SMTP_URL, messages stay here as pending)')
  .addOption(new Option('--status <status>', 'only messages in this state').choices(['pending', 'sent', 'failed']))
  .option('--limit <n>', 'how many messages', '50')
  .action(async (options: { status?: string; limit: string }) => {
    const listed = await operate('emails.list', options);
    const messages = listed.emails as { id: string; kind: string; to: string; subject: string; status: string; attempts: number; created_at: string; last_error: string | null }[];
    print(
      listed,
      messages
        .map((m) => `${m.created_at}  ${m.status.padEnd(7)}  ${m.kind.padEnd(20)}  ${m.to}  "${m.subject}"${m.attempts > 0 ? `  attempts ${m.attempts}` : ''}${m.last_error ? `  last error: ${m.last_error}` : ''}`)
        .join('\n') || 'No emails.',
    );
  });

program
  .command('dev-token')
  .description('mint an ID token from the built-in development identity provider')
  .requiredOption('--email <email>', 'the signed-in person')
  .action(async (options: { email: string }) => {
    const settings = await config();
    const { loadDevIdentityKeys, mintDevIdToken } = await import('../services/dev-identity.ts');
    if (settings.externalIdentityProvider) {
      throw new Error('An external identity provider is configured (OIDC_*); the API does not trust development tokens.');
    }
    const token = await mintDevIdToken(await loadDevIdentityKeys(settings.dataDir), {
      baseUrl: settings.baseUrl,
      email: options.email,
    });
    print({ id_token: token }, token);
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(78);
  }
  // The part said why on the shared output; the start fails as it did (78 for a configuration error).
  const { ChildFailedToStart } = await import('../runtime/supervised-process.ts');
  if (error instanceof ChildFailedToStart) process.exit(error.exitCode);
  console.error(`petsing: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
