import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort, portsFree, runPetsing } from './support/processes.ts';
import { createTestNamespace } from './support/temporal.ts';

/** Log lines at error level or above (pino's JSON: 50 error, 60 fatal). */
const errorLines = (output: string) => output.split('\n').filter((line) => /"level":(5|6)\d/.test(line));

describe('petsing processes', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  const listeners: Server[] = [];
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'petsing-processes-'));
    // No metrics endpoints: their default ports are fixed, and test files run side by side.
    env = { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(await freePort()), LOG_LEVEL: 'info', METRICS_PORT: '0', CONTROL_WORKER_METRICS_PORT: '0', RENDER_METRICS_PORT: '0' };
  });
  afterEach(async () => {
    await Promise.all(listeners.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Something else listening on a port: a plain TCP server that accepts and says nothing. */
  const occupy = async (): Promise<number> => {
    const server = createServer((socket) => socket.on('error', () => {}));
    listeners.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as { port: number }).port;
  };

  it('start refuses to run when its Temporal dev server port is taken, naming the port and the setting', async () => {
    const port = await occupy();
    const start = runPetsing(['start'], { ...env, TEMPORAL_DEV_PORT: String(port), TEMPORAL_DEV_UI_PORT: String(await freePort()) });
    children.push(start.child);
    expect(await start.exited).toBe(78);
    expect(start.output()).toContain(`TEMPORAL_DEV_PORT: port ${port} on 127.0.0.1 is already in use`);
    expect(start.output()).toContain(`TEMPORAL_ADDRESS=127.0.0.1:${port}`);
    expect(start.output()).not.toContain('petsing is running');
  });

  it('start refuses when another Temporal server answers on that port, rather than attach its workers to it', async () => {
    const port = inject('temporalAddress').split(':').at(-1)!;
    const start = runPetsing(['start'], { ...env, TEMPORAL_DEV_PORT: port, TEMPORAL_DEV_UI_PORT: String(await freePort()) });
    children.push(start.child);
    expect(await start.exited).toBe(78);
    expect(start.output()).toContain(`TEMPORAL_DEV_PORT: port ${port} on 127.0.0.1 is already in use`);
    expect(start.output()).not.toContain('petsing is running');
  });

  it('start refuses when the dev server UI port is taken', async () => {
    const uiPort = await occupy();
    const start = runPetsing(['start'], { ...env, TEMPORAL_DEV_PORT: String(await freePort()), TEMPORAL_DEV_UI_PORT: String(uiPort) });
    children.push(start.child);
    expect(await start.exited).toBe(78);
    expect(start.output()).toContain(`TEMPORAL_DEV_UI_PORT: port ${uiPort} on 127.0.0.1 is already in use`);
  });

  it('start refuses at once when the API port is taken, naming the port and the setting', async () => {
    const port = await occupy();
    const start = runPetsing(['start'], { ...env, PORT: String(port), TEMPORAL_DEV_PORT: String(await freePort()), TEMPORAL_DEV_UI_PORT: String(await freePort()) });
    children.push(start.child);
    expect(await start.exited).toBe(78);
    expect(start.output()).toContain(`PORT: port ${port} on 127.0.0.1 is already in use, so the API cannot listen there`);
    expect(start.output()).not.toContain('petsing is running');
  });

  it('start stops everything and exits 78 when its render worker refuses its settings', async () => {
    const temporalPorts = { TEMPORAL_DEV_PORT: String(await freePort()), TEMPORAL_DEV_UI_PORT: String(await freePort()) };
    const start = runPetsing(['start'], { ...env, ...temporalPorts, RENDER_BATCH_SIZE: 'lots' });
    children.push(start.child);
    expect(await start.exited).toBe(78);
    expect(start.output()).toContain('RENDER_BATCH_SIZE');
    expect(start.output()).toContain('"part":"render worker"');
    expect(start.output()).toContain('exited before it started serving');
    // Nothing of it runs on: the API's port and the dev server's are free again.
    expect(await portsFree([Number(env.PORT), Number(temporalPorts.TEMPORAL_DEV_PORT)])).toBe(true);
  }, 120_000);

  it('a worker stopped by SIGTERM drains and exits 0 without logging an error', async () => {
    const { address, namespace } = await createTestNamespace();
    const worker = runPetsing(['worker', 'control'], { ...env, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace });
    children.push(worker.child);
    const deadline = Date.now() + 90_000;
    while (!worker.output().includes('"controlWorker":"serving the control task queue"')) {
      if (worker.child.exitCode !== null || Date.now() > deadline) throw new Error(`the control worker did not start:\n${worker.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    const output = worker.output();
    expect(output).toContain('"part":"control worker","msg":"stopped"');
    expect(output).toContain('"state":"STOPPED"');
    expect(errorLines(output)).toEqual([]);
  }, 120_000);
});
