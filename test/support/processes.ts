import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** Asks the kernel for a free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A block of `count` consecutive free ports (SeaweedFS derives gRPC ports as port + 10000). */
export async function freePortBlock(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 9_000);
    const ports = Array.from({ length: count }, (_, i) => base + i);
    if (await portsFree([...ports, ...ports.map((p) => p + 10_000)])) return base;
  }
  throw new Error('no free port block found');
}

/** Whether every one of these loopback ports can be listened on now. */
export async function portsFree(ports: number[]): Promise<boolean> {
  for (const port of ports) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (!free) return false;
  }
  return true;
}

export function startProcess(command: string, args: string[], name: string): ChildProcess {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    tail.push(chunk.toString());
    if (tail.length > 50) tail.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal === null) console.error(`${name} exited with ${code}:\n${tail.join('')}`);
  });
  return child;
}

/** Waits for `check` as waitFor does, but an error it throws ends the wait (a process that exited, a render that failed). */
export async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${what} did not happen within ${timeoutMs} ms`);
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not become ready within ${timeoutMs} ms`);
}

/**
 * Waits for a started service's /health. A service that exits first, or does not answer in time, fails the wait
 * with what it printed last, so that a failed start says why.
 */
export async function waitForHealth(service: ChildProcess, baseUrl: string, output: () => string, timeoutMs: number): Promise<void> {
  const answered = async () => {
    if (service.exitCode !== null || service.signalCode !== null) throw new Error(`the service exited (${service.exitCode ?? service.signalCode}) before GET /health answered`);
    return fetch(`${baseUrl}/health`).then((response) => response.ok, () => false);
  };
  await waitUntil('GET /health', answered, timeoutMs).catch((error: Error) => {
    throw new Error(`${error.message}; it printed last:\n${output().slice(-4_000)}`);
  });
}

/** Stops a process with SIGTERM, and with SIGKILL once `graceMs` has passed. */
export async function stopProcess(child: ChildProcess | undefined, graceMs = 5_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Whether a process with this pid exists (signal 0 reaches it). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The environment of a `petsing start` on its embedded defaults in `dataDir`, on free ports (the API's and its own
 * Temporal dev server's), logging at warn, with `extra` on top; and the API's port.
 */
export async function embeddedServiceEnv(dataDir: string, extra: Record<string, string> = {}): Promise<{ env: NodeJS.ProcessEnv; port: number }> {
  const port = await freePort();
  const env = serviceProcessEnv({
    DATA_DIR: dataDir,
    PORT: String(port),
    TEMPORAL_DEV_PORT: String(await freePort()),
    TEMPORAL_DEV_UI_PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
    ...extra,
  });
  return { env, port };
}

/** The CLI of the control plane (`petsing`), run with this Node. */
export const PETSING_CLI = join(import.meta.dirname, '..', '..', 'control-plane', 'bin', 'petsing.mjs');

/**
 * The environment of a service process a test starts: this process's own, less the BASE_URL ('/') Vite puts
 * into it, which the service would read as its own base URL. Its metrics endpoints are off unless `env` names a
 * port: the default ports are fixed, and test files run side by side (a taken port refuses the start). Template
 * previews are off unless `env` turns them on (TEMPLATE_PREVIEWS: 'true'): seven renders at every first start would
 * queue before the test's own video; the tests of the previews and the landing page that plays them turn them on.
 */
export function serviceProcessEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { BASE_URL: _viteBaseUrl, ...inherited } = process.env;
  return { METRICS_PORT: '0', CONTROL_WORKER_METRICS_PORT: '0', RENDER_METRICS_PORT: '0', TEMPLATE_PREVIEWS: 'false', ...inherited, ...env };
}

/** How much of a petsing process's output a test keeps (the end of it). */
const OUTPUT_KEPT = 200_000;

export type PetsingProcess = {
  child: ChildProcess;
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** What it has written so far, stdout and stderr together. */
  output(): string;
  /**
   * Until `petsing start` serves: GET /health at `baseUrl` answers and it has said that it runs. Fails at once, with
   * its output, when it exits.
   */
  serving(baseUrl: string, timeoutMs?: number): Promise<void>;
};

/**
 * A `petsing` command run the way an operator runs it, with `env` as given (serviceProcessEnv makes one). `detached`:
 * in a process group of its own, as a terminal runs it, so that the group can be sent a Ctrl-C.
 */
export function runPetsing(args: string[], env: NodeJS.ProcessEnv, { detached = false } = {}): PetsingProcess {
  const child = spawn(process.execPath, [PETSING_CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], detached });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-OUTPUT_KEPT));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    output: () => output,
    serving: (baseUrl, timeoutMs = 180_000) =>
      waitUntil('petsing start to serve', async () => {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`petsing ${args.join(' ')} exited (${child.exitCode ?? child.signalCode}):\n${output.slice(-20_000)}`);
        return output.includes('petsing is running') && ((await fetch(`${baseUrl}/health`).catch(() => undefined))?.ok ?? false);
      }, timeoutMs).catch((error: Error) => {
        throw error.message.includes('exited') ? error : new Error(`${error.message}; its output ended with:\n${output.slice(-20_000)}`);
      }),
  };
}
