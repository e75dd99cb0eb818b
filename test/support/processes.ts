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

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not become ready within ${timeoutMs} ms`);
}

export async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** The CLI of the control plane (`petsing`), run with this Node. */
export const PETSING_CLI = join(import.meta.dirname, '..', '..', 'control-plane', 'bin', 'petsing.mjs');

/**
 * The environment of a service process a test starts: this process's own, less the BASE_URL ('/') Vite puts
 * into it, which the service would read as its own base URL. Its metrics endpoints are off unless `env` names a
 * port: the default ports are fixed, and test files run side by side (a taken port refuses the start).
 */
export function serviceProcessEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { BASE_URL: _viteBaseUrl, ...inherited } = process.env;
  return { METRICS_PORT: '0', CONTROL_WORKER_METRICS_PORT: '0', RENDER_METRICS_PORT: '0', ...inherited, ...env };
}
