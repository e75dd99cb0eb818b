import { resolve, join } from 'node:path';
import { rm } from 'node:fs/promises';
import { ConfigError } from '@petsing/platform/config';
import { portIsFree } from '@petsing/platform/ports';
import type { ControlPlaneConfig } from '../config/env.ts';
import type { Logger } from '../logging/logger.ts';
import { prepareEmbeddedTemporal } from './embedded-temporal.ts';
import { recordPid, stopLeftover } from './leftover-process.ts';
import { isPetsingCommand, runningSupervisor, supervisorPidFile } from './supervisor-pid.ts';
import { apiPortTaken } from './api-port.ts';
import { Lifecycle } from './lifecycle.ts';
import { petsingPart, STOP_GRACE_MS, type ChildSpec } from './supervised-child.ts';
import { superviseProcess, type SupervisedProcess, type SupervisedSpec } from './supervised-process.ts';

/** The CLI, which `petsing start` runs again for each process it supervises. */
const PETSING_CLI = resolve(import.meta.dirname, '..', '..', 'bin', 'petsing.mjs');

export type SupervisedService = {
  lifecycle: Lifecycle;
  apiUrl: string;
  wsUrl: string;
  temporalUiUrl: string | undefined;
  parts: string[];
  /** Resolves once the render worker serves too; rejects with ChildFailedToStart when it exits before that. */
  renderWorkerServing: Promise<void>;
};

/**
 * The processes `petsing start` runs, each a petsing command of its own. On the embedded database (PGlite, which
 * one process opens) the API and the control worker share `petsing serve`; on Postgres they are `petsing worker
 * control` and `petsing api`. The render worker always runs alone: a render that crashes its node takes nothing else
 * down.
 */
function childSpecs(config: ControlPlaneConfig): { controlPlane: ChildSpec[]; renderWorker: ChildSpec } {
  const child = (part: string, args: string[]): ChildSpec => ({ part, args, pidFile: join(config.dataDir, `${args.join('-')}.pid`) });
  return {
    controlPlane: config.embedded.database ? [child('API and control worker', ['serve'])] : [child('control worker', ['worker', 'control']), child('API', ['api'])],
    renderWorker: child('render worker', ['worker', 'render']),
  };
}

/**
 * `petsing start`: supervises the whole service as separate processes (README, "Embedded defaults and external
 * mode"). The control-plane processes start at once and open the database while the Temporal dev server (unless
 * TEMPORAL_ADDRESS names a cluster) starts beside them; their workers wait for it. It resolves once they serve (the
 * API answers), and starts the render worker then, so as not to share the CPU with their start; a process that
 * exits before it serves fails the start with its exit code (`renderWorkerServing` for the render worker). Later, a process that dies is started again with a growing delay
 * while the others go on; all of them stop when this process is gone. Stopping stops the API first, then the
 * workers (which finish or hand back their tasks), then Temporal.
 */
export async function superviseService(config: ControlPlaneConfig, logger: Logger): Promise<SupervisedService> {
  const { controlPlane, renderWorker } = childSpecs(config);
  await claimDataDir(config, [...controlPlane, renderWorker], logger);
  // What can refuse the start (a taken port, no binary) is said before any process runs.
  const devServer = config.embedded.temporal ? await prepareEmbeddedTemporal(config, logger) : undefined;
  const lifecycle = new Lifecycle(logger);
  // From the first process on: a Ctrl-C while the parts start stops those started so far.
  lifecycle.exitOnSignals();
  const pidFile = supervisorPidFile(config.dataDir);
  await recordPid(pidFile, process.pid);
  lifecycle.add('pid file', () => rm(pidFile, { force: true }));
  const parts = new Map<SupervisedSpec, SupervisedProcess>();
  const launch = async (spec: SupervisedSpec) => {
    const part = superviseProcess(spec, logger);
    parts.set(spec, part);
    await part.ready;
  };
  const controlPlaneParts = controlPlane.map((spec) => petsingPart(spec, PETSING_CLI));
  const renderWorkerPart = petsingPart(renderWorker, PETSING_CLI);
  try {
    // Stopped in reverse: the API first, then the workers, then Temporal.
    for (const spec of [devServer?.part, renderWorkerPart, ...controlPlaneParts]) {
      if (spec) lifecycle.add(spec.part, async () => parts.get(spec)?.stop());
    }
    await Promise.all([
      devServer && launch(devServer.part),
      (async () => {
        for (const spec of controlPlaneParts) await launch(spec);
      })(),
    ]);
    const renderWorkerServing = launch(renderWorkerPart);
    renderWorkerServing.catch(() => {});
    return {
      lifecycle,
      apiUrl: config.baseUrl,
      wsUrl: config.wsUrl,
      temporalUiUrl: devServer?.uiUrl,
      parts: [...controlPlaneParts, renderWorkerPart, ...(devServer ? [devServer.part] : [])].map((spec) => spec.part),
      renderWorkerServing,
    };
  } catch (error) {
    await lifecycle.stop();
    throw error;
  }
}

/**
 * Makes DATA_DIR this start's: refuses it while another `petsing start` runs on it, waits for the children a
 * killed one left stopping (they stop by themselves once their supervisor is gone; the embedded database must not
 * be opened twice), and checks that the API's port is free.
 */
async function claimDataDir(config: ControlPlaneConfig, specs: ChildSpec[], logger: Logger): Promise<void> {
  const running = await runningSupervisor(config.dataDir);
  if (running !== undefined) {
    throw new ConfigError([
      `DATA_DIR: petsing is already running on ${config.dataDir} (pid ${running}). Stop it first, or give this one another DATA_DIR.`,
    ]);
  }
  for (const spec of specs) {
    await stopLeftover({ pidFile: spec.pidFile, isOurs: isPetsingCommand(spec.args), what: spec.part, ask: 'already', graceMs: STOP_GRACE_MS }, logger);
  }
  // Said now rather than once the API has opened the database and started its workers.
  const { HOST, PORT } = config.env;
  if (!(await portIsFree(HOST, PORT))) throw apiPortTaken(HOST, PORT);
}
