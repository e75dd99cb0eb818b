import { basename, join } from 'node:path';
import { recordedProcess } from './leftover-process.ts';

/** Where a running `petsing start` keeps its pid: a second start of the same DATA_DIR is refused, and the CLI waits for it. */
export const supervisorPidFile = (dataDir: string) => join(dataDir, 'petsing.pid');

/** Whether a command line runs `petsing <args…>` (by its bin script, or through npm's `petsing` link to it). */
export const isPetsingCommand = (args: string[]) => (commandLine: string[]) =>
  commandLine.some((arg) => ['petsing', 'petsing.mjs'].includes(basename(arg))) && args.every((arg) => commandLine.includes(arg));

/** The pid of the `petsing start` running on this DATA_DIR, if one runs. */
export const runningSupervisor = (dataDir: string) => recordedProcess(supervisorPidFile(dataDir), isPetsingCommand(['start']));
