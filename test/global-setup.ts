import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { CHECKOUT_CACHE_DIR } from '../platform/src/tools/checkout-cache.ts';
import type { TestProject } from 'vitest/node';
import { freePort, freePortBlock, startProcess, stopProcess, waitFor } from './support/processes.ts';

/** Where the run's workflow bundle is kept between runs: in this checkout, beside its other caches. */
const WORKFLOW_BUNDLE_FOLDER = join(CHECKOUT_CACHE_DIR, 'test-workflow-bundle');

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    s3Endpoint: string;
  }
}

/**
 * Starts the services every test file shares: one Temporal dev server and one SeaweedFS S3 server.
 * Postgres is the machine's own (TEST_DATABASE_URL); each test file makes a fresh database in it.
 */
export default async function setup(project: TestProject) {
  const scratch = await mkdtemp(join(tmpdir(), 'petsing-test-'));
  const children: ChildProcess[] = [];

  const temporalPort = await freePort();
  const temporalBinary = process.env.TEMPORAL_CLI_PATH ?? 'temporal';
  children.push(
    startProcess(
      temporalBinary,
      ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(temporalPort), '--log-level', 'error'],
      'temporal dev server',
    ),
  );

  const base = await freePortBlock(4);
  const s3Port = base + 3;
  children.push(
    startProcess(
      process.env.WEED_PATH ?? 'weed',
      [
        'server', '-ip=127.0.0.1', '-ip.bind=127.0.0.1', `-dir=${scratch}`,
        `-master.port=${base}`, `-volume.port=${base + 1}`, '-filer', `-filer.port=${base + 2}`,
        '-s3', `-s3.port=${s3Port}`, '-s3.port.iceberg=0', '-s3.port.lance=0', '-master.volumeSizeLimitMB=64',
        // Every bucket is a collection with volumes of its own; the default cap of 8 volumes runs out after a few
        // buckets and writes then fail with InternalError.
        '-volume.max=200',
      ],
      'seaweedfs',
    ),
  );

  const temporalAddress = `127.0.0.1:${temporalPort}`;
  const s3Endpoint = `http://127.0.0.1:${s3Port}`;
  try {
    await Promise.all([
      waitFor('temporal dev server', async () => {
        const { Connection } = await import('@temporalio/client');
        const connection = await Connection.connect({ address: temporalAddress, connectTimeout: 1_000 });
        await connection.close();
        return true;
      }),
      waitFor('seaweedfs s3', async () => (await fetch(`${s3Endpoint}/`)).status === 200),
    ]);
  } catch (error) {
    await Promise.all(children.map(stopProcess));
    throw error;
  }

  // The workflow code bundled once for the whole run (and kept between runs under a hash of its sources), as a
  // production image ships it (WORKFLOW_BUNDLE_PATH): every control worker a test starts, in its process or as
  // `petsing start`, loads it instead of running webpack (6-10 s of CPU each). Test files started after this inherit
  // the variable; json-logs.test.ts unsets it to see a first start bundle.
  // (In a process of its own: vite's module runner, which runs this file, has no import.meta.resolve.) The folder is
  // this checkout's: a bundle kept there replaces those of older sources, which a run of another checkout on the same
  // machine may be using.
  const bundled = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', [
    `import { cachedWorkflowBundle } from ${JSON.stringify(join(import.meta.dirname, '..', 'workflows', 'src', 'bundle.ts'))};`,
    `const quiet = () => {};`,
    `const logger = { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet };`,
    `console.log(await cachedWorkflowBundle(${JSON.stringify(WORKFLOW_BUNDLE_FOLDER)}, logger));`,
  ].join('\n')]);
  process.env.WORKFLOW_BUNDLE_PATH = bundled.stdout.trim();

  project.provide('temporalAddress', temporalAddress);
  project.provide('s3Endpoint', s3Endpoint);

  return async () => {
    await Promise.all(children.map(stopProcess));
    await rm(scratch, { recursive: true, force: true });
  };
}
